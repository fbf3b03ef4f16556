package bot

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Warm CLIs' memory (issue 33): a warm CLI waiting for its turn holds
// 150–165 MB (Claude Code), 175 MB (Codex) or 360–370 MB (Gemini CLI), so
// four of them can pin 1.5 GB. Unless WARM_MAX says otherwise, the bot
// keeps one warm CLI per warmShare of the memory available at start-up,
// at most defaultWarmMax: a quarter of that memory at the largest CLI's
// size (400 MiB each).
const (
	warmCLIBytes   = 400 << 20
	warmShare      = 4 * warmCLIBytes
	defaultWarmMax = 4
)

// memInfo is what /proc/meminfo says of the machine's memory, in bytes;
// zero when unknown.
type memInfo struct{ total, available int64 }

// readMemInfo reads /proc/meminfo; a zero memInfo where there is none.
func readMemInfo() memInfo {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return memInfo{}
	}
	defer f.Close()
	var m memInfo
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, _ := strings.Cut(sc.Text(), ":")
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "MemTotal":
			m.total = kb << 10
		case "MemAvailable":
			m.available = kb << 10
		}
	}
	return m
}

// warmMax is how many warm CLIs to keep given WARM_MAX (configured, zero
// when unset) and the machine's memory, and where that number came from.
func warmMax(configured int, mem memInfo) (int, string) {
	if configured > 0 {
		return configured, "WARM_MAX"
	}
	if mem.available <= 0 {
		return defaultWarmMax, "the machine's memory is unknown"
	}
	n := int(min(int64(defaultWarmMax), mem.available/warmShare))
	return n, fmt.Sprintf("chosen from %s of available memory, one per %s", gib(mem.available), gib(warmShare))
}

// short reports whether memory is short: less than a tenth of it
// available. Warm CLIs go first then (core.RouterConfig.WarmPressure).
func (m memInfo) short() bool { return m.total > 0 && m.available < m.total/10 }

// memoryShort is WarmPressure on this machine.
func memoryShort() bool { return readMemInfo().short() }

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

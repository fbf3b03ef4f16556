package bot

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// memInfo is the memory this process may use, in bytes: the machine's,
// as /proc/meminfo says, within its cgroup's limit; zero when unknown.
type memInfo struct{ total, available int64 }

// readMemInfo reads the memory this process may use; a zero memInfo where
// nothing says.
func readMemInfo() memInfo { return readMemInfoAt("/") }

// readMemInfoAt is readMemInfo with the files under root. A container
// sees the machine's memory in /proc/meminfo: its cgroup's limit is what
// it has (a bot in a 1 GiB container on a 64 GiB host choosing from 64
// GiB would be killed for memory it never had).
func readMemInfoAt(root string) memInfo {
	m := readProcMeminfo(filepath.Join(root, "proc/meminfo"))
	limit, used := cgroupMemory(root)
	if limit <= 0 {
		return m
	}
	if m.total <= 0 || limit < m.total {
		m.total = limit
	}
	if free := max(0, limit-used); m.available <= 0 || free < m.available {
		m.available = free
	}
	return m
}

func readProcMeminfo(path string) memInfo {
	f, err := os.Open(path)
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

// cgroupMemory is the memory limit of this process's cgroup and what the
// group uses, in bytes; zero where no limit is set or none can be read. It
// looks where a container or a systemd unit has it: cgroup v2's files for
// the process's own group (/proc/self/cgroup), then at the mount's root (a
// container's own group); then cgroup v1's memory controller, the same
// two ways.
func cgroupMemory(root string) (limit, used int64) {
	fsRoot := filepath.Join(root, "sys/fs/cgroup")
	v1Root := filepath.Join(fsRoot, "memory")
	var v2, v1 []string
	if data, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup")); err == nil {
		for line := range strings.Lines(string(data)) {
			// hierarchy:controllers:path
			fields := strings.SplitN(strings.TrimSpace(line), ":", 3)
			if len(fields) != 3 || fields[2] == "/" {
				continue
			}
			switch {
			case fields[0] == "0" && fields[1] == "":
				v2 = append(v2, filepath.Join(fsRoot, fields[2]))
			case slices.Contains(strings.Split(fields[1], ","), "memory"):
				v1 = append(v1, filepath.Join(v1Root, fields[2]))
			}
		}
	}
	for _, dir := range append(v2, fsRoot) {
		if limit, used = readLimit(dir, "memory.max", "memory.current", "inactive_file"); limit > 0 {
			return limit, used
		}
	}
	for _, dir := range append(v1, v1Root) {
		if limit, used = readLimit(dir, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"); limit > 0 {
			return limit, used
		}
	}
	return 0, 0
}

// readLimit reads a cgroup's memory limit and use, in dir; zero for
// "max", the huge number cgroup v1 writes for no limit, or a file not
// there. Its use counts the page cache, which the kernel gives back when
// it must: the file pages it has not touched lately (inactive_file in
// memory.stat) are left out, as the working set container tools report.
func readLimit(dir, limitFile, usedFile, inactiveStat string) (limit, used int64) {
	data, err := os.ReadFile(filepath.Join(dir, limitFile))
	if err != nil {
		return 0, 0
	}
	limit, err = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || limit <= 0 || limit >= 1<<60 {
		return 0, 0
	}
	if data, err := os.ReadFile(filepath.Join(dir, usedFile)); err == nil {
		used, _ = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "memory.stat")); err == nil {
		for line := range strings.Lines(string(data)) {
			if value, ok := strings.CutPrefix(strings.TrimSpace(line), inactiveStat+" "); ok {
				inactive, _ := strconv.ParseInt(value, 10, 64)
				used = max(0, used-inactive)
				break
			}
		}
	}
	return limit, used
}

// warmMax is how many warm CLIs to keep given WARM_MAX (configured, zero
// when unset) and the machine's memory, and where that number came from.
func warmMax(configured int, mem memInfo) (int, string) {
	if configured > 0 {
		return configured, "WARM_MAX"
	}
	if mem.total <= 0 {
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

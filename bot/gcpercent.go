package bot

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// The collector's target (issue 33). Under load the collector is much of
// a turn's tail beyond its own work: with 100 conversations streaming at
// once through a runner (the load curve, lockstep), GOGC=400 took the
// runner hop's p99 from 6.3–6.9 to 3.4–5.1 ms and CPU per 1,000 deltas
// from 38–40 to 27–29 ms; at 1,000, the hop's p99 from 54–58 to 27–36 ms.
// It costs memory: peak RSS 69 → 78–81 MiB at 100, 255 → 428–441 MiB at
// 1,000. So unless GOGC says otherwise the target is chosen from the
// memory available at start-up, as WARM_MAX is: gcGenerous of it or more
// takes gcHigh, half that gcMid, less keeps Go's own 100.
const (
	gcGenerous = 4 << 30
	gcHigh     = 400
	gcMid      = 200
)

// gcPercent is the collector's target given GOGC (as set, "" unset) and
// the machine's memory, and where it came from; zero leaves the runtime's
// own (GOGC's, or 100).
func gcPercent(gogc string, mem memInfo) (int, string) {
	switch {
	case gogc != "":
		return 0, "GOGC"
	case mem.total <= 0:
		return 0, "Go's default: the machine's memory is unknown"
	case mem.available >= gcGenerous:
		return gcHigh, fmt.Sprintf("chosen from %s of available memory", gib(mem.available))
	case mem.available >= gcGenerous/2:
		return gcMid, fmt.Sprintf("chosen from %s of available memory", gib(mem.available))
	}
	return 0, fmt.Sprintf("Go's default: %s of available memory", gib(mem.available))
}

// SetGCPercent sets this process's collector target as gcPercent
// chooses it, and says what it is and where that came from. The bot and
// `jakebot runner` call it at start-up; so does the load curve, which
// measures what they run.
func SetGCPercent() (percent int, from string) {
	n, from := gcPercent(os.Getenv("GOGC"), readMemInfo())
	if n > 0 {
		debug.SetGCPercent(n)
		return n, from
	}
	sample := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0, from
	}
	return int(sample[0].Value.Uint64()), from
}

// memLimitShare is the part of the memory available at start-up that the
// bot's heap is held to softly (debug.SetMemoryLimit), issue 41's Medium
// 5: with the high GOGC a roomy machine gets, a burst of the bot's own
// (files sent, many streams at once) grew its heap to several times what
// it held; near the limit the collector runs harder instead.
const memLimitShare = 2

// memLimit is the soft memory limit given GOMEMLIMIT (as set, "" unset)
// and the machine's memory, from the same reading as gcPercent's: half
// of what is available; zero leaves the runtime's own (GOMEMLIMIT's, or
// none).
func memLimit(gomemlimit string, mem memInfo) (int64, string) {
	switch {
	case gomemlimit != "":
		return 0, "GOMEMLIMIT"
	case mem.total <= 0 || mem.available <= 0:
		return 0, "none: the machine's memory is unknown"
	}
	return mem.available / memLimitShare, fmt.Sprintf("half of %s of available memory", gib(mem.available))
}

// SetMemoryLimit sets this process's soft memory limit as memLimit
// chooses it, and says what it is (0: none) and where it came from. The
// bot and `jakebot runner` call it at start-up, with SetGCPercent.
func SetMemoryLimit() (limit int64, from string) {
	n, from := memLimit(os.Getenv("GOMEMLIMIT"), readMemInfo())
	if n > 0 {
		debug.SetMemoryLimit(n)
		return n, from
	}
	if cur := debug.SetMemoryLimit(-1); cur != math.MaxInt64 {
		return cur, from
	}
	return 0, from
}

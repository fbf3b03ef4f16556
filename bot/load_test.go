package bot_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// loadToken is one delta of the load CLI: its index and the time it was
// written, in microseconds modulo loadWrap.
var loadToken = regexp.MustCompile(`(\d+)\.(\d+);`)

const loadWrap = 10_000_000_000 // µs, about 2.8 hours

// BenchmarkLoad runs 200 conversations at once through the router and the
// Claude plugin, each turn a helper-process CLI streaming 2,000 deltas
// (one per millisecond), onto a recording platform with Discord's limits
// (2,000 runes, an edit per message per 500 ms). It checks that every
// reply arrives complete and in order, that no write exceeds the limit and
// that no goroutine or process is left, and reports peak RSS, the delay
// from a CLI line to the write that carries it, and CPU per 1,000 events.
//
//	go test -run '^$' -bench BenchmarkLoad -benchtime 1x ./bot
//
// JAKEBOT_LOAD_CONVERSATIONS changes the number of conversations, to
// compare with a machine that is not saturated. Its 200 CLI processes
// cost more CPU than the bot: BenchmarkLoadCurve, whose fakes cost next
// to nothing, is what measures the bot; this run keeps the real process
// boundary honest.
func BenchmarkLoad(b *testing.B) {
	n := 200
	if s := os.Getenv("JAKEBOT_LOAD_CONVERSATIONS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for range b.N {
		runLoad(b, n, 2000)
	}
}

func runLoad(b *testing.B, conversations, events int) {
	const editInterval = 500 * time.Millisecond
	goroutinesBefore := runtime.NumGoroutine()
	mark, alive := plugintest.ProcessMarker(b)
	plugin := claude.New(claude.Config{ConfigDir: b.TempDir(), Settings: cliproc.Settings{Bin: os.Args[0], Env: []string{
		mark, "JAKEBOT_FAKE_CLAUDE=load", "FAKE_EVENTS=" + strconv.Itoa(events), "FAKE_BATCH=10", "FAKE_GAP=10ms"}}}, nil)
	reg, err := core.NewRegistry(plugin)
	if err != nil {
		b.Fatal(err)
	}
	roots, err := core.NewRoots([]string{b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	access := core.NewAccess()
	access.Allow("fake", "*")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	router := core.NewRouter(ctx, core.RouterConfig{Plugins: reg, Access: access, Roots: roots}, nil)

	// The recorder stamps each write with the system clock; the delays
	// are worked out after the run, so that measuring costs the bot
	// nothing.
	rec := platformtest.NewRecorder(core.SystemClock{}, core.Limits{EditInterval: editInterval})
	handle := router.Attach(rec)
	drained := make(chan struct{})
	go func() {
		for range rec.Written() {
		}
		close(drained)
	}()

	var self0, children0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children0)
	start := time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range conversations {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := core.ConversationKey{Platform: "fake", User: fmt.Sprintf("u%d", i), Channel: fmt.Sprintf("c%03d", i)}
			handle(ctx, core.Message{Key: key, Text: "/claude start"})
			handle(ctx, core.Message{Key: key, Text: "stream please"})
		}()
	}
	wg.Wait()
	router.Wait()
	b.StopTimer()
	elapsed := time.Since(start)
	var self1, children1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children1)

	raw, beyond := lineDelays(rec.Calls(), editInterval)
	checkReplies(b, rec.Calls(), conversations, events)

	// Nothing left behind.
	if pids := alive(); len(pids) != 0 {
		b.Errorf("processes %v outlived their turns", pids)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutinesBefore+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // reply senders exit right after their last write
	}
	if n := runtime.NumGoroutine(); n > goroutinesBefore+2 {
		b.Errorf("%d goroutines after the run, %d before", n, goroutinesBefore)
	}

	total := conversations * events
	botCPU, cliCPU := cpuBetween(self0, self1), cpuBetween(children0, children1)
	perK := botCPU / time.Duration(total/1000)
	p := percentile
	b.ReportMetric(float64(self1.Maxrss)/1024, "peak_rss_MiB")
	b.ReportMetric(float64(p(raw, 0.5).Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(p(raw, 0.99).Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(p(beyond, 0.5).Microseconds())/1000, "p50_beyond_throttle_ms")
	b.ReportMetric(float64(p(beyond, 0.99).Microseconds())/1000, "p99_beyond_throttle_ms")
	b.ReportMetric(float64(perK.Microseconds())/1000, "bot_cpu_ms/1k_events")
	b.Logf("%d conversations × %d events in %s: bot CPU %s (%s per 1,000 events), fake CLIs' CPU %s; peak RSS %.0f MiB; "+
		"CLI line → write p50 %s p99 %s; beyond the %s throttle p50 %s p99 %s; %d writes",
		conversations, events, elapsed.Round(time.Millisecond), botCPU.Round(time.Millisecond), perK.Round(time.Microsecond),
		cliCPU.Round(time.Millisecond), float64(self1.Maxrss)/1024, p(raw, 0.5).Round(time.Microsecond), p(raw, 0.99).Round(time.Microsecond),
		editInterval, p(beyond, 0.5).Round(time.Microsecond), p(beyond, 0.99).Round(time.Microsecond), len(rec.Calls()))
	cancel()
	_ = drained
}

// lineDelays works out, for every CLI line, how long it took to reach the
// first write that carried it (raw), and how much of that was not the
// throttle's doing (beyond): the time since the line was written or since
// the reply could next be edited, whichever is later. The coordinator
// throttles edits per reply, and a reply writes its pages in order, so a
// new page waits behind the last edit of the page before it.
func lineDelays(calls []platformtest.Call, editInterval time.Duration) (raw, beyond []time.Duration) {
	maxSeen := map[string]int{}        // channel (one streamed reply each) → highest line index written so far
	lastEdit := map[string]time.Time{} // channel → its reply's last edit
	for _, c := range calls {
		ch := c.Ref.Target.Channel
		prev, edited := lastEdit[ch]
		if c.Op == "edit" {
			lastEdit[ch] = c.At
		}
		seen, ok := maxSeen[ch]
		if !ok {
			seen = -1
		}
		atMicro := c.At.UnixMicro()
		for _, m := range loadToken.FindAllStringSubmatch(c.Text, -1) {
			i, _ := strconv.Atoi(m[1])
			if i <= seen {
				continue
			}
			seen = i
			tok, _ := strconv.ParseInt(m[2], 10, 64)
			written := time.UnixMicro(atMicro - (atMicro-tok)%loadWrap)
			raw = append(raw, c.At.Sub(written))
			earliest := written
			if edited && prev.Add(editInterval).After(earliest) {
				earliest = prev.Add(editInterval)
			}
			beyond = append(beyond, max(0, c.At.Sub(earliest)))
		}
		maxSeen[ch] = seen
	}
	return raw, beyond
}

// checkReplies fails tb unless each of conversations channels got one
// reply carrying its events deltas, all of them, in order, with the
// footer at the end, in writes within the 2,000-rune limit. It returns
// how many replies lacked deltas or had them out of order, and shows the
// first few.
func checkReplies(tb testing.TB, calls []platformtest.Call, conversations, events int) (lost, disordered int) {
	tb.Helper()
	pagesByChannel := map[string][]string{}
	final := map[string]string{}
	for _, c := range calls {
		if n := utf8.RuneCountInString(c.Text); n > 2000 {
			tb.Errorf("a %s of %d runes, over the limit of 2000", c.Op, n)
		}
		if _, ok := final[c.Ref.ID]; !ok {
			pagesByChannel[c.Ref.Target.Channel] = append(pagesByChannel[c.Ref.Target.Channel], c.Ref.ID)
		}
		final[c.Ref.ID] = c.Text
	}
	lost = conversations - len(pagesByChannel)
	for ch, ids := range pagesByChannel {
		var text strings.Builder
		for _, id := range ids {
			text.WriteString(final[id])
		}
		toks := loadToken.FindAllStringSubmatch(text.String(), -1)
		switch {
		case len(toks) != events:
			if lost++; lost <= 3 {
				tb.Logf("%s: %d of %d deltas arrived: %.300q", ch, len(toks), events, text.String())
			}
		case !inOrder(toks):
			if disordered++; disordered <= 3 {
				tb.Logf("%s: deltas out of order: %.300q", ch, text.String())
			}
		case !strings.Contains(final[ids[len(ids)-1]], "— 1.2s · $0.0125"):
			tb.Errorf("%s: the last page lacks the footer", ch)
		}
	}
	if lost > 0 || disordered > 0 {
		tb.Errorf("of %d replies, %d lost deltas and %d had them out of order", conversations, lost, disordered)
	}
	return lost, disordered
}

// inOrder reports whether the deltas are numbered 0, 1, 2…
func inOrder(toks [][]string) bool {
	for i, m := range toks {
		if m[1] != strconv.Itoa(i) {
			return false
		}
	}
	return true
}

// percentile returns the q quantile of ds, 0 for none.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// cpuBetween is the CPU time (user and system) spent between two rusages.
func cpuBetween(a, z syscall.Rusage) time.Duration {
	return time.Duration(z.Utime.Nano()-a.Utime.Nano()) + time.Duration(z.Stime.Nano()-a.Stime.Nano())
}

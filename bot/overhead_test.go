package bot_test

import (
	"cmp"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/claude"
)

// BenchmarkTurnOverhead runs the same fake CLI (this test binary replaying
// a recorded Claude stream) spawned directly and through the router, in
// pairs, and reports the ratio of the medians: what the bot adds to a turn.
func BenchmarkTurnOverhead(b *testing.B) {
	stream, err := filepath.Abs("../testdata/claude/multi_tool.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	env := "JAKEBOT_FAKE_STREAM=" + stream
	workdir := b.TempDir()

	roots, _ := core.NewRoots([]string{workdir})
	reg, _ := core.NewRegistry(claude.New(claude.Config{Bin: os.Args[0], Env: []string{env}}, nil))
	access := core.NewAccess()
	access.Allow("fake", "u")
	router := core.NewRouter(context.Background(), core.RouterConfig{Plugins: reg, Access: access, Roots: roots}, nil)
	rec := platformtest.NewRecorder(coretest.NewInstantClock(), core.Limits{FinalOnly: true})
	handle := router.Attach(rec)
	key := core.ConversationKey{Platform: "fake", User: "u", Channel: "c"}
	say := func(text string) { handle(context.Background(), core.Message{Key: key, Text: text}) }
	say("/claude start")
	<-rec.Written()

	direct := func() {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), env)
		cmd.Dir = workdir
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, out)
		cmd.Wait()
	}
	routed := func() {
		say("go")
		<-rec.Written() // the final reply
		router.Wait()
	}
	var directTimes, routedTimes []time.Duration
	for b.Loop() {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		routed()
		t2 := time.Now()
		directTimes = append(directTimes, t1.Sub(t0))
		routedTimes = append(routedTimes, t2.Sub(t1))
	}
	d, r := median(directTimes), median(routedTimes)
	b.ReportMetric(float64(d.Microseconds()), "direct-µs")
	b.ReportMetric(float64(r.Microseconds()), "routed-µs")
	b.ReportMetric(float64(r)/float64(d), "ratio")
}

// median returns the middle of xs, 0 for none.
func median[T cmp.Ordered](xs []T) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

package core_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
)

// bursting is a turn whose agent, for a prompt "burst N FILE", calls
// send_file N times at once, and says how many calls went well.
func bursting(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	var n int
	var file string
	if _, err := fmt.Sscanf(turn.Prompt, "burst %d %s", &n, &file); err != nil {
		emit(core.TextEvent("ran " + turn.Prompt))
		return core.TurnResult{SessionID: "tok"}, nil
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	for range n {
		wg.Go(func() {
			if err := turn.Tools.Actions.SendFile(ctx, file, ""); err == nil {
				mu.Lock()
				sent++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	emit(core.TextEvent("sent " + strconv.Itoa(sent)))
	return core.TurnResult{SessionID: "tok"}, nil
}

// A burst of the agent's send_file calls in a turn holds one file at a
// time (issue 41, Medium 5): each send holds its file whole, and 50 of a
// 20 MiB file at once took the bot's heap to 1.4 GiB. While the first
// send is held at the platform, every other call of the turn waits, and
// none reads its file. Before, all of them were in flight at once: a
// second reached the platform while the first was held.
//
// Not parallel: the count of waits (SetSendWaits) is the package's.
func TestSendFileBurstsWaitTheirTurn(t *testing.T) {
	const burst = 20
	waits := make(chan struct{}, burst)
	core.SetSendWaits(t, func() { waits <- struct{}{} })
	f := newRouterFixtureWith(t, bursting, nil, withAgentTools(t))
	entered := make(chan platformtest.SentFile, burst)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	f.rec.Sending = func(sf platformtest.SentFile) {
		entered <- sf
		<-release
	}
	if err := os.WriteFile(filepath.Join(f.root, "big.bin"), []byte(strings.Repeat("x", 1<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	f.say("bob", "/fake start")
	f.expect("conversation started")
	f.say("bob", fmt.Sprintf("burst %d big.bin", burst))
	<-entered
	for range burst - 1 {
		select {
		case <-waits:
		case sf := <-entered:
			t.Fatalf("a second send (%s) reached the platform while the first was held", sf.Name)
		}
	}
	once.Do(func() { close(release) })
	f.expect(fmt.Sprintf("sent %d", burst))
}

// BenchmarkSendFileBurst is issue 41's Medium 5: a turn's agent calls
// send_file 50 times at once for a 20 MiB file, each iteration. It
// reports the heap's peak (the live heap objects, sampled each
// millisecond, at the collector target it runs with) as peak-heap-MiB.
func BenchmarkSendFileBurst(b *testing.B) {
	f := newRouterFixtureWith(b, bursting, nil, withAgentTools(b))
	if err := os.WriteFile(filepath.Join(f.root, "big.bin"), make([]byte, 20<<20), 0o600); err != nil {
		b.Fatal(err)
	}
	go func() {
		for range f.rec.Files() {
		}
	}()
	f.say("bob", "/fake start")
	f.expect("conversation started")
	peak := watchHeap(b)
	for b.Loop() {
		f.say("bob", "burst 50 big.bin")
		f.expect("sent 50")
		f.router.Wait()
	}
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
}

// watchHeap samples the live heap each millisecond until the benchmark
// ends; the function it returns gives the highest sample.
func watchHeap(b *testing.B) func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var high atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > high.Load() {
				high.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return high.Load()
	}
}

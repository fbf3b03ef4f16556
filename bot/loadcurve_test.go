package bot_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/workspace"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// BenchmarkLoadCurve measures the bot, not its fakes: conversations
// streaming at once through the router and the Claude plugin's parser
// (synthClaude: no process), onto two platform fakes with Discord's
// limits, at each step of JAKEBOT_LOAD_STEPS (conversations), locally and
// through each of JAKEBOT_LOAD_RUNNERS runners (0 is the gateway's own
// machine) over an embedded NATS server; then the memory of
// JAKEBOT_LOAD_IDLE conversations kept idle (by default the short step CI
// runs; make load-full sets the whole curve). Every step checks that every
// reply arrived whole and in order. It prints the table README.md's "How
// far it scales" shows.
//
//	go test -run '^$' -bench '^BenchmarkLoadCurve$' -benchtime 1x ./bot
//
// JAKEBOT_LOAD_EVENTS (per conversation) and JAKEBOT_LOAD_PACE (deltas
// per write, and the time between writes: "5/100ms") set the stream;
// JAKEBOT_LOAD_SPREAD (any value) starts each stream at a random point of
// its first gap instead of all at once; JAKEBOT_LOAD_PROCS (any value)
// runs each runner in a process of its own, as deployed (loadrunner_test.go);
// JAKEBOT_LOAD_LOG=warn shows the bot's warnings (a turn that failed, a
// turn message sent again), errors only otherwise.
func BenchmarkLoadCurve(b *testing.B) {
	steps := envInts("JAKEBOT_LOAD_STEPS", "10,100")
	runners := envInts("JAKEBOT_LOAD_RUNNERS", "0,1")
	idle := envInts("JAKEBOT_LOAD_IDLE", "1000")[0]
	fake := synthClaude{events: envInts("JAKEBOT_LOAD_EVENTS", "200")[0], batch: 5, gap: 100 * time.Millisecond,
		spread: os.Getenv("JAKEBOT_LOAD_SPREAD") != ""}
	procs := os.Getenv("JAKEBOT_LOAD_PROCS") != ""
	// The collector's target the bot and its runners would choose here.
	gc, gcFrom := bot.SetGCPercent()
	if pace := os.Getenv("JAKEBOT_LOAD_PACE"); pace != "" {
		n, gap, _ := strings.Cut(pace, "/")
		fake.batch, _ = strconv.Atoi(n)
		fake.gap, _ = time.ParseDuration(gap)
	}
	var rows []loadRow
	for _, r := range runners {
		for _, n := range steps {
			b.Run(fmt.Sprintf("runners=%d/conversations=%d", r, n), func(b *testing.B) {
				for range b.N {
					row := runCurveStep(b, n, r, fake, procs)
					rows = append(rows, row)
					row.report(b)
				}
			})
		}
	}
	var idleRow idleCost
	if idle > 0 {
		b.Run(fmt.Sprintf("idle/conversations=%d", idle), func(b *testing.B) {
			for range b.N {
				idleRow = runIdleStep(b, idle)
			}
		})
	}
	printLoadTable(os.Stdout, rows, idleRow, fake, procs, fmt.Sprintf("GOGC %d (%s)", gc, gcFrom))
}

func envInts(name, def string) []int {
	s := os.Getenv(name)
	if s == "" {
		s = def
	}
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			ns = append(ns, n)
		}
	}
	if len(ns) == 0 {
		ns = []int{0}
	}
	return ns
}

// loadRow is what one step of the curve measured.
type loadRow struct {
	conversations, runners, events int
	elapsed                        time.Duration
	cpu                            time.Duration // the whole test process's: bot, fakes and NATS
	peakRSS, peakHeap              uint64
	p50, p99, rawP99               time.Duration // beyond the throttle, and line → write
	arriveP50, arriveP99           time.Duration // line → the router: the hop's own delay, with runners
	writesPerSec                   []float64     // per platform fake
	peakGoroutines                 int
	lost, disordered               int // replies
}

func (r loadRow) cpuPerK() time.Duration {
	return r.cpu / time.Duration(max(1, r.conversations*r.events/1000))
}

func (r loadRow) report(b *testing.B) {
	b.ReportMetric(float64(r.cpuPerK().Microseconds())/1000, "cpu_ms/1k_events")
	b.ReportMetric(float64(r.peakRSS)/(1<<20), "peak_rss_MiB")
	b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50_beyond_throttle_ms")
	b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99_beyond_throttle_ms")
	b.ReportMetric(float64(r.arriveP99.Microseconds())/1000, "p99_line_to_router_ms")
	b.ReportMetric(float64(r.peakGoroutines), "peak_goroutines")
}

// loadBot is a router on two platform fakes, reaching the plugin on this
// machine or on runners over NATS.
type loadBot struct {
	router    *core.Router
	platforms []*loadPlatform
	handles   []core.Handler
	arrivals  *arrivals
	// where is what conversation i's /claude start names.
	where func(i int) string
	// runners are the runners' processes, when they have their own.
	runners []runnerProcess
}

const loadEditInterval = 500 * time.Millisecond

func newLoadBot(b testing.TB, runners int, plugin synthClaude, keep, procs bool) *loadBot {
	dir := b.TempDir()
	arrived := &arrivals{}
	var local core.Plugin = plugin
	if runners == 0 {
		local = timedPlugin{plugin, arrived}
	}
	reg, err := core.NewRegistry(local)
	if err != nil {
		b.Fatal(err)
	}
	roots, err := core.NewRoots([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	access := core.NewAccess()
	lb := &loadBot{where: func(int) string { return "" }, arrivals: arrived}
	level := slog.LevelError
	level.UnmarshalText([]byte(os.Getenv("JAKEBOT_LOAD_LOG"))) // "warn" shows what a step retried
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg := core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Logger: logger}
	if runners > 0 {
		var gw *remote.Gateway
		if procs {
			gw, lb.runners = startRunnerProcesses(b, runners, plugin, dir)
		} else {
			gw = startRunners(b, runners, reg, roots, logger)
		}
		cfg.Runners = timedRunners{gw, arrived}
		lb.where = func(i int) string { return fmt.Sprintf(" box%d:%s", i%runners+1, dir) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	lb.router = core.NewRouter(ctx, cfg, nil)
	b.Cleanup(lb.router.Shutdown)
	for _, name := range []string{"discord", "slack"} {
		access.Allow(name, "*")
		p := newLoadPlatform(name, core.Limits{EditInterval: loadEditInterval}, keep)
		lb.platforms = append(lb.platforms, p)
		lb.handles = append(lb.handles, lb.router.Attach(p))
	}
	return lb
}

// converse starts conversation i and sends it one message.
func (lb *loadBot) converse(i int) {
	p := i % len(lb.platforms)
	key := core.ConversationKey{Platform: lb.platforms[p].name, User: "u" + strconv.Itoa(i), Channel: "c" + strconv.Itoa(i)}
	lb.handles[p](context.Background(), core.Message{Key: key, Text: "/claude start" + lb.where(i)})
	lb.handles[p](context.Background(), core.Message{Key: key, Text: "stream please"})
}

// startRunners runs an embedded NATS server, n runners (box1…) serving
// reg in roots, and a gateway that has heard them all.
func startRunners(b testing.TB, n int, reg *core.Registry, roots core.Roots, logger *slog.Logger) *remote.Gateway {
	url := startNATS(b)
	connect := func(opts ...nats.Option) *nats.Conn {
		nc, err := nats.Connect(url, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(nc.Close)
		return nc
	}
	gw := startGateway(b, connect(), logger)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	for i := 1; i <= n; i++ {
		name := "box" + strconv.Itoa(i)
		r, err := remote.NewRunner(connect(remote.RunnerInbox(name)), remote.RunnerConfig{Name: name, Plugins: reg,
			Workspace: workspace.Machine{Roots: roots}, Interval: 50 * time.Millisecond, Logger: logger})
		if err != nil {
			b.Fatal(err)
		}
		go r.Run(ctx)
		waitForRunner(b, gw, name)
	}
	return gw
}

// startGateway starts a gateway on nc, stopped when the benchmark ends.
func startGateway(b testing.TB, nc *nats.Conn, logger *slog.Logger) *remote.Gateway {
	gw, err := remote.NewGateway(context.Background(), nc, remote.GatewayConfig{OfflineAfter: time.Minute, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(gw.Close)
	return gw
}

// waitForRunner waits until the gateway has heard runner name, a minute
// at most.
func waitForRunner(tb testing.TB, gw *remote.Gateway, name string) {
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := gw.Plugin(name, "claude", core.Message{}, true)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the gateway has not heard runner %s: %v", name, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runCurveStep runs conversations at once, each one streamed turn, and
// measures it.
func runCurveStep(b *testing.B, conversations, runners int, fake synthClaude, procs bool) loadRow {
	lb := newLoadBot(b, runners, fake, true, procs)
	row := loadRow{conversations: conversations, runners: runners, events: fake.events}
	freeMemory()
	stop := sampleProcess(&row)
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	var runnersCPU time.Duration
	for _, p := range lb.runners {
		runnersCPU -= p.cpu()
	}
	start := time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range conversations {
		wg.Go(func() { lb.converse(i) })
	}
	wg.Wait()
	lb.router.Wait()
	b.StopTimer()
	row.elapsed = time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	for _, p := range lb.runners {
		runnersCPU += p.cpu()
	}
	stop()
	row.cpu = cpuBetween(r0, r1) + runnersCPU

	var calls []platformtest.Call
	for _, p := range lb.platforms {
		calls = append(calls, p.calls()...)
		row.writesPerSec = append(row.writesPerSec, float64(p.writes.Load())/row.elapsed.Seconds())
	}
	row.lost, row.disordered = checkReplies(b, calls, conversations, fake.events)
	raw, beyond := lineDelays(calls, loadEditInterval)
	row.p50, row.p99, row.rawP99 = percentile(beyond, 0.5), percentile(beyond, 0.99), percentile(raw, 0.99)
	arrived := lb.arrivals.delays()
	row.arriveP50, row.arriveP99 = percentile(arrived, 0.5), percentile(arrived, 0.99)
	return row
}

// arrivals keeps how long each delta took from its line to the router:
// through a runner, that is the hop (the runner's parser, NATS and the
// gateway), measured apart from what the chat's throttle does with it.
type arrivals struct {
	mu  sync.Mutex
	got []time.Duration
}

func (a *arrivals) note(ev core.Event) {
	if ev.Kind != core.EventText {
		return
	}
	now := time.Now().UnixMicro()
	var got []time.Duration
	for text := ev.Text; ; {
		_, rest, ok := strings.Cut(text, ".")
		stamp, after, ok2 := strings.Cut(rest, ";")
		if !ok || !ok2 {
			break
		}
		if tok, err := strconv.ParseInt(stamp, 10, 64); err == nil {
			written := now - (now-tok)%loadWrap
			got = append(got, time.Duration(now-written)*time.Microsecond)
		}
		text = after
	}
	a.mu.Lock()
	a.got = append(a.got, got...)
	a.mu.Unlock()
}

func (a *arrivals) delays() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.got
}

// timedPlugin notes when each of its events reaches the router.
type timedPlugin struct {
	core.Plugin
	arrived *arrivals
}

func (p timedPlugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	return p.Plugin.Run(ctx, t, func(ev core.Event) {
		p.arrived.note(ev)
		emit(ev)
	})
}

// timedRunners are runners whose plugins note when each of their events
// reaches the router.
type timedRunners struct {
	core.Runners
	arrived *arrivals
}

func (r timedRunners) Place(runner string, who core.Rights) core.Place {
	return timedPlace{r.Runners.Place(runner, who), r.arrived}
}

type timedPlace struct {
	core.Place
	arrived *arrivals
}

func (p timedPlace) Plugin(id string, m core.Message) (core.Plugin, error) {
	plugin, err := p.Place.Plugin(id, m)
	if err != nil {
		return nil, err
	}
	return timedPlugin{plugin, p.arrived}, nil
}

// sampleProcess records the peak RSS, heap and goroutines into row until
// stop is called.
func sampleProcess(row *loadRow) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	sample := func() {
		rss, heap := processMemory()
		row.peakRSS, row.peakHeap = max(row.peakRSS, rss), max(row.peakHeap, heap)
		row.peakGoroutines = max(row.peakGoroutines, runtime.NumGoroutine())
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-tick.C:
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-finished; sample() }
}

// processMemory returns this process's resident memory and its Go heap
// in use.
func processMemory() (rss, heap uint64) {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			pages, _ := strconv.ParseUint(f[1], 10, 64)
			rss = pages * uint64(os.Getpagesize())
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return rss, ms.HeapInuse
}

// freeMemory collects garbage and hands what it freed back to the
// system, so that RSS is what is live.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// idleCost is what conversations cost once their turns are over.
type idleCost struct {
	conversations       int
	rssPer, heapPer     float64 // bytes per conversation
	goroutinesLeft      int
	elapsed, cpuPerTurn time.Duration
}

// runIdleStep runs one short turn in each of n conversations, 500 at a
// time, and measures the memory and goroutines they keep afterwards.
func runIdleStep(b *testing.B, n int) idleCost {
	lb := newLoadBot(b, 0, synthClaude{events: 3, batch: 3}, false, false)
	freeMemory()
	rss0, heap0 := processMemory()
	g0 := runtime.NumGoroutine()
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	start := time.Now()
	b.ResetTimer()
	sem := make(chan struct{}, 500)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			lb.converse(i)
			<-sem
		})
	}
	wg.Wait()
	lb.router.Wait()
	b.StopTimer()
	c := idleCost{conversations: n, elapsed: time.Since(start)}
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	c.cpuPerTurn = cpuBetween(r0, r1) / time.Duration(n)
	freeMemory()
	rss1, heap1 := processMemory()
	c.goroutinesLeft = runtime.NumGoroutine() - g0
	c.rssPer = (float64(rss1) - float64(rss0)) / float64(n)
	c.heapPer = (float64(heap1) - float64(heap0)) / float64(n)
	if got := lb.router.Stats().Conversations; got != n {
		b.Errorf("%d conversations kept, want %d", got, n)
	}
	b.ReportMetric(c.rssPer/1024, "rss_KiB/conversation")
	b.ReportMetric(c.heapPer/1024, "heap_KiB/conversation")
	return c
}

// printLoadTable writes the curve as README.md's "How far it scales"
// shows it.
func printLoadTable(w io.Writer, rows []loadRow, idle idleCost, fake synthClaude, procs bool, gc string) {
	when := "all writing at the same instants"
	if fake.spread {
		when = "each starting at a random point of its first gap"
	}
	if procs {
		when += "; each runner in a process of its own (CPU counts theirs; RSS and heap are the gateway's)"
	}
	fmt.Fprintf(w, "\nLoad curve: each conversation one turn of %d deltas, %d every %s, %s, onto 2 platform fakes (edits ≥ %s apart); GOMAXPROCS %d, %s\n",
		fake.events, fake.batch, fake.gap, when, loadEditInterval, runtime.GOMAXPROCS(0), gc)
	fmt.Fprintln(w, "| runners | conversations | CPU per 1,000 events | peak RSS | peak heap | beyond throttle p50 / p99 | line → write p99 | line → router p50 / p99 | writes/s per fake | peak goroutines | replies lost / out of order | hop p99 (vs 0 runners) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	local := map[int]time.Duration{}
	for _, r := range rows {
		if r.runners == 0 {
			local[r.conversations] = r.arriveP99
		}
	}
	for _, r := range rows {
		hop := "–"
		if l, ok := local[r.conversations]; ok && r.runners > 0 {
			hop = (r.arriveP99 - l).Round(100 * time.Microsecond).String()
		}
		var wps []string
		for _, x := range r.writesPerSec {
			wps = append(wps, strconv.FormatFloat(x, 'f', 0, 64))
		}
		fmt.Fprintf(w, "| %d | %d | %s | %.0f MiB | %.0f MiB | %s / %s | %s | %s / %s | %s | %d | %d / %d | %s |\n", r.runners, r.conversations,
			r.cpuPerK().Round(10*time.Microsecond), float64(r.peakRSS)/(1<<20), float64(r.peakHeap)/(1<<20),
			r.p50.Round(100*time.Microsecond), r.p99.Round(100*time.Microsecond), r.rawP99.Round(time.Millisecond),
			r.arriveP50.Round(100*time.Microsecond), r.arriveP99.Round(100*time.Microsecond),
			strings.Join(wps, " / "), r.peakGoroutines, r.lost, r.disordered, hop)
	}
	if idle.conversations > 0 {
		fmt.Fprintf(w, "\nIdle: %d conversations after one turn each keep %.1f KiB RSS and %.1f KiB heap each, %d goroutines in all (%s of CPU per turn)\n",
			idle.conversations, idle.rssPer/1024, idle.heapPer/1024, idle.goroutinesLeft, idle.cpuPerTurn.Round(time.Microsecond))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(w, "Load average at the end: %s\n", strings.Join(strings.Fields(string(b))[:3], " "))
	}
}

package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// warmingPlugin is a scripted plugin whose CLI can start early.
type warmingPlugin struct {
	*plugintest.Scripted
	warmed chan *fakeWarm
	fresh  bool
}

type fakeWarm struct {
	turn   core.Turn
	fresh  bool
	ran    chan string
	closed chan struct{}
	once   sync.Once
}

func (p *warmingPlugin) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	w := &fakeWarm{turn: t, fresh: p.fresh, ran: make(chan string, 1), closed: make(chan struct{})}
	p.warmed <- w
	return w, nil
}

func (w *fakeWarm) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	w.ran <- t.Prompt
	emit(core.TextEvent("warm: " + t.Prompt))
	return core.TurnResult{ResumeToken: w.turn.ResumeToken}, nil
}
func (w *fakeWarm) Fresh() bool { return w.fresh }
func (w *fakeWarm) Close()      { w.once.Do(func() { close(w.closed) }) }

func newWarmFixture(t *testing.T, fresh bool, ttl time.Duration) (*routerFixture, *warmingPlugin) {
	t.Helper()
	var wp *warmingPlugin
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		cfg.WarmTTL, cfg.WarmMax = ttl, 1
		wp = &warmingPlugin{warmed: make(chan *fakeWarm, 10), fresh: fresh}
	})
	// The fixture's registry holds the plain plugin: rebuild the router
	// around the warming one.
	wp.Scripted = f.plugin
	reg, err := core.NewRegistry(wp)
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := core.NewRoots([]string{f.root})
	access := core.NewAccess()
	access.Allow("fake", "alice", "bob")
	ctx, cancel := context.WithCancel(context.Background())
	router := core.NewRouter(ctx, core.RouterConfig{Plugins: reg, Access: access, Roots: roots, WarmTTL: ttl, WarmMax: 1}, nil)
	t.Cleanup(func() {
		router.Shutdown()
		cancel()
	})
	f.router, f.handle = router, router.Attach(f.rec)
	return f, wp
}

func receiveWarm(t *testing.T, ch <-chan *fakeWarm) *fakeWarm {
	t.Helper()
	select {
	case w := <-ch:
		return w
	case <-time.After(20 * time.Second): // a failure guard, not a timing assertion
		t.Fatal("no CLI was warmed")
		return nil
	}
}

func closed(t *testing.T, w *fakeWarm, what string) {
	t.Helper()
	select {
	case <-w.closed:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the warm CLI was not closed", what)
	}
}

// waitWarm waits until n warm CLIs are in the router's pool.
func waitWarm(t *testing.T, f *routerFixture, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a failure guard
	for f.router.Stats().Warm != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d warm CLIs, want %d", f.router.Stats().Warm, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// The next turn's CLI starts when the conversation starts and after each
// turn, resumed on the conversation's session; the message goes to it.
func TestRouterWarmsTheNextTurn(t *testing.T) {
	t.Parallel()
	f, wp := newWarmFixture(t, true, time.Hour)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	first := receiveWarm(t, wp.warmed)
	// Warm has been called; the router pools what it returned just after.
	// A message before that would run cold, as it should.
	waitWarm(t, f, 1)
	f.say("alice", "one")
	if got := <-first.ran; got != "one" {
		t.Fatalf("warm CLI got %q", got)
	}
	f.expect("warm: one")
	f.router.Wait()
	select {
	case turn := <-f.plugin.Started():
		t.Fatalf("a cold turn ran too: %+v", turn)
	default:
	}
	second := receiveWarm(t, wp.warmed) // after the turn
	if second.turn.Workdir != f.root || second.turn.Prompt != "" {
		t.Errorf("warmed for %+v", second.turn)
	}
	waitWarm(t, f, 1)
	f.say("alice", "/status")
	f.expect("next turn's CLI warm")
	f.say("alice", "/stop")
	f.expect("Nothing is running")
	closed(t, second, "/stop")
}

// A warm CLI whose session changed meanwhile does not answer: the turn
// runs cold.
func TestRouterDiscardsAStaleWarmCLI(t *testing.T) {
	t.Parallel()
	f, wp := newWarmFixture(t, false, time.Hour)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	stale := receiveWarm(t, wp.warmed)
	waitWarm(t, f, 1)
	f.say("alice", "one")
	f.expect("echo: one")
	if turn := <-f.plugin.Started(); turn.Prompt != "one" {
		t.Errorf("cold turn %+v", turn)
	}
	closed(t, stale, "a stale CLI")
	f.router.Wait()
}

// Unused warm CLIs are stopped after WarmTTL, and beyond WarmMax the
// least recently used goes first.
func TestRouterBoundsWarmCLIs(t *testing.T) {
	t.Parallel()
	f, wp := newWarmFixture(t, true, time.Hour)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	alices := receiveWarm(t, wp.warmed)
	waitWarm(t, f, 1) // in the pool, before bob's comes
	f.say("bob", "/fake start")
	f.expect("conversation started")
	receiveWarm(t, wp.warmed)
	closed(t, alices, "WarmMax 1") // bob's pushed alice's out

	g, wp2 := newWarmFixture(t, true, time.Millisecond)
	g.say("alice", "/fake start")
	g.expect("conversation started")
	closed(t, receiveWarm(t, wp2.warmed), "WarmTTL")
}

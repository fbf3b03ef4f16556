package core_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// warmingPlugin is a scripted plugin whose CLI can start early.
type warmingPlugin struct {
	*plugintest.Scripted
	warmed chan *fakeWarm
	fresh  bool
	// gate, when set, holds every warm-up until it is closed.
	gate chan struct{}
}

type fakeWarm struct {
	turn   core.Turn
	fresh  bool
	ran    chan string
	closed chan struct{}
	once   sync.Once
	// started is closed when the fake CLI's handshake is done.
	started chan struct{}
}

func (p *warmingPlugin) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	w := &fakeWarm{turn: t, fresh: p.fresh, ran: make(chan string, 1), closed: make(chan struct{}), started: make(chan struct{})}
	p.warmed <- w
	if p.gate != nil {
		<-p.gate
	}
	return w, nil
}

func (w *fakeWarm) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	w.ran <- t.Prompt
	emit(core.TextEvent("warm: " + t.Prompt))
	return core.TurnResult{SessionID: w.turn.SessionID}, nil
}
func (w *fakeWarm) Fresh() bool            { return w.fresh }
func (w *fakeWarm) Close()                 { w.once.Do(func() { close(w.closed) }) }
func (w *fakeWarm) Ready() <-chan struct{} { return w.started }

// isClosed reports whether w was closed by now.
func (w *fakeWarm) isClosed() bool {
	select {
	case <-w.closed:
		return true
	default:
		return false
	}
}

// warmFixture is a router whose plugin "fake" warms (WarmTTL one hour on
// a manual Timers clock, WarmMax 1 unless configure says otherwise), and
// a plain plugin "other" beside it.
type warmFixture struct {
	*routerFixture
	wp     *warmingPlugin
	other  *plugintest.Scripted
	timers *coretest.ManualClock
}

func newWarmFixture(t *testing.T, fresh bool, configure func(*core.RouterConfig)) *warmFixture {
	t.Helper()
	wf := &warmFixture{timers: coretest.NewManualClock(),
		other: &plugintest.Scripted{PluginID: "other", PluginName: "Fake other", Script: echo}}
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		cfg.WarmTTL, cfg.WarmMax, cfg.Timers = time.Hour, 1, wf.timers
		plain, _ := cfg.Plugins.Get("fake")
		wf.wp = &warmingPlugin{Scripted: plain.(*plugintest.Scripted), warmed: make(chan *fakeWarm, 10), fresh: fresh}
		reg, err := core.NewRegistry(wf.wp, wf.other)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Plugins = reg
		if configure != nil {
			configure(cfg)
		}
	})
	t.Cleanup(f.router.Shutdown)
	wf.routerFixture = f
	return wf
}

// start starts user's conversation and returns its first warm CLI, once
// the router has pooled it.
func (f *warmFixture) start(user string) *fakeWarm {
	f.t.Helper()
	n := f.router.Stats().Warm
	f.say(user, "/fake start")
	f.expect("conversation started")
	w := receiveWarm(f.t, f.wp.warmed)
	waitWarm(f.t, f.routerFixture, n+1)
	return w
}

func receiveWarm(t testing.TB, ch <-chan *fakeWarm) *fakeWarm {
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
func waitWarm(t testing.TB, f *routerFixture, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a failure guard
	for f.router.Stats().Warm != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d warm CLIs, want %d", f.router.Stats().Warm, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Stats counts a warm CLI as ready only once it says it has started (its
// handshake done): a CLI just spawned is warm, not ready.
func TestStatsCountsWarmCLIsReadyOnceStarted(t *testing.T) {
	f := newWarmFixture(t, true, nil)
	w := f.start("alice")
	if st := f.router.Stats(); st.Warm != 1 || st.WarmReady != 0 {
		t.Fatalf("Stats = %+v before the CLI started, want 1 warm, 0 ready", st)
	}
	close(w.started)
	if st := f.router.Stats(); st.Warm != 1 || st.WarmReady != 1 {
		t.Fatalf("Stats = %+v once the CLI started, want 1 warm, 1 ready", st)
	}
}

// The next turn's CLI starts when the conversation starts and after each
// turn, resumed on the conversation's session; the message goes to it.
func TestRouterWarmsTheNextTurn(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t, true, nil)
	// Warm has been called; the router pools what it returned just after.
	// A message before that would run cold, as it should.
	first := f.start("alice")
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
	second := receiveWarm(t, f.wp.warmed) // after the turn
	if second.turn.Workdir != f.root || second.turn.Prompt != "" {
		t.Errorf("warmed for %+v", second.turn)
	}
	waitWarm(t, f.routerFixture, 1)
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
	f := newWarmFixture(t, false, nil)
	stale := f.start("alice")
	f.say("alice", "one")
	f.expect("echo: one")
	if turn := <-f.plugin.Started(); turn.Prompt != "one" {
		t.Errorf("cold turn %+v", turn)
	}
	closed(t, stale, "a stale CLI")
	f.router.Wait()
}

// A warm CLI serves only the turn it was started for. A command that
// changes the conversation's plugin, workdir, model or mode closes it at
// once (and warms one for the new turn); a change the commands did not
// make (the conversation's state edited behind the router's back) is
// caught when the turn starts: the old CLI is closed, the turn runs cold.
func TestRouterDiscardsAWarmCLIForAnotherTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// command changes the conversation through the chat; change does
		// it behind the router's back.
		command string
		change  func(c *core.Conversation, root string)
		// cold is the plugin that runs the next turn cold; rewarmed is
		// what the new warm CLI's turn must show, or "" when none starts.
		cold     string
		rewarmed func(core.Turn) bool
	}{
		{name: "/model", command: "/model fake-large", rewarmed: func(t core.Turn) bool { return t.Model == "fake-large" }},
		{name: "/mode", command: "/mode ask", rewarmed: func(t core.Turn) bool { return t.Ask }},
		{name: "/workdir set", command: "/workdir set sub", rewarmed: func(t core.Turn) bool { return filepath.Base(t.Workdir) == "sub" }},
		{name: "/other start", command: "/other start"},
		{name: "plugin", change: func(c *core.Conversation, _ string) { c.Plugin = "other" }, cold: "other"},
		{name: "workdir", change: func(c *core.Conversation, root string) { c.Workdir = filepath.Join(root, "sub") }, cold: "fake"},
		{name: "model", change: func(c *core.Conversation, _ string) { c.Model = "fake-large" }, cold: "fake"},
		{name: "mode", change: func(c *core.Conversation, _ string) { c.Mode = "plan" }, cold: "fake"},
		{name: "approvals", change: func(c *core.Conversation, _ string) { c.Approvals = core.ModeAsk }, cold: "fake"},
		{name: "session", change: func(c *core.Conversation, _ string) { c.SessionID = "another-session" }, cold: "fake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newWarmFixture(t, true, nil)
			if err := os.Mkdir(filepath.Join(f.root, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			old := f.start("alice")
			key := core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"}
			if tc.change == nil {
				f.say("alice", tc.command)
				f.next()
				closed(t, old, tc.command)
				if tc.rewarmed != nil {
					if w := receiveWarm(t, f.wp.warmed); !tc.rewarmed(w.turn) {
						t.Errorf("after %s the warm CLI was started for %+v", tc.command, w.turn)
					}
				}
				return
			}
			f.router.Conversations().Update(key, func(c *core.Conversation) { tc.change(c, f.root) })
			f.say("alice", "one")
			f.expect("echo: one")
			started := f.plugin.Started()
			if tc.cold == "other" {
				started = f.other.Started()
			}
			if turn := <-started; turn.Prompt != "one" {
				t.Errorf("cold turn %+v", turn)
			}
			closed(t, old, "the changed conversation's turn")
			select {
			case p := <-old.ran:
				t.Errorf("the warm CLI answered %q", p)
			default:
			}
			f.router.Wait()
		})
	}
}

// /stop, /conversation end and shutdown close the conversation's warm
// CLI; so does an unused warm CLI's WarmTTL, on the Timers clock.
func TestRouterClosesWarmCLIs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		close func(f *warmFixture)
	}{
		{"/stop", func(f *warmFixture) { f.say("alice", "/stop"); f.expect("Nothing is running") }},
		{"/conversation end", func(f *warmFixture) { f.say("alice", "/conversation end"); f.expect("Conversation ended") }},
		{"shutdown", func(f *warmFixture) { f.router.Shutdown() }},
		{"wind down", func(f *warmFixture) { f.router.WindDown(time.Minute) }},
		{"WarmTTL", func(f *warmFixture) {
			f.timers.Advance(time.Hour - time.Nanosecond)
			if f.router.Stats().Warm != 1 {
				f.t.Error("the warm CLI was closed before WarmTTL")
			}
			f.timers.Advance(time.Nanosecond)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newWarmFixture(t, true, nil)
			w := f.start("alice")
			tc.close(f)
			closed(t, w, tc.name)
			waitWarm(t, f.routerFixture, 0)
		})
	}
}

// A warm-up still starting when the conversation moves on (it ends, a
// /stop, a new model) is closed when it arrives, not pooled until WarmTTL.
func TestRouterClosesAWarmUpOvertakenByAChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		command, reply string
		rewarms        bool
	}{
		{"/conversation end", "Conversation ended", false},
		{"/stop", "Nothing is running", false},
		{"/model fake-large", "Model: fake-large", true},
	} {
		t.Run(tc.command, func(t *testing.T) {
			t.Parallel()
			f := newWarmFixture(t, true, nil)
			gate := make(chan struct{})
			f.wp.gate = gate
			f.say("alice", "/fake start")
			f.expect("conversation started")
			late := receiveWarm(t, f.wp.warmed) // held in Warm
			f.say("alice", tc.command)
			f.expect(tc.reply)
			close(gate)
			closed(t, late, "a warm-up overtaken by "+tc.command)
			if tc.rewarms {
				w := receiveWarm(t, f.wp.warmed)
				waitWarm(t, f.routerFixture, 1)
				if w.isClosed() || w.turn.Model != "fake-large" {
					t.Errorf("the new warm CLI: closed %v, turn %+v", w.isClosed(), w.turn)
				}
				return
			}
			// The late CLI is closed by now, and was never pooled.
			if n := f.router.Stats().Warm; n != 0 {
				t.Errorf("%d warm CLIs pooled after %s", n, tc.command)
			}
		})
	}
}

// Unused warm CLIs beyond WarmMax are closed, least recently used first.
func TestRouterBoundsWarmCLIs(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t, true, nil)
	alices := f.start("alice")
	f.say("bob", "/fake start")
	f.expect("conversation started")
	receiveWarm(t, f.wp.warmed)
	closed(t, alices, "WarmMax 1") // bob's pushed alice's out
	waitWarm(t, f.routerFixture, 1)
}

// Warm CLIs are not running turns: with MaxRunningTurns 1 and two warm
// CLIs waiting, a turn starts at once, and Stats counts them apart.
func TestRouterWarmCLIsAreNotRunningTurns(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t, true, func(cfg *core.RouterConfig) { cfg.WarmMax, cfg.MaxRunningTurns = 2, 1 })
	alices := f.start("alice")
	f.start("bob")
	if st := f.router.Stats(); st.Warm != 2 || st.Running != 0 || st.Queued != 0 {
		t.Fatalf("stats %+v, want 2 warm, nothing running or queued", st)
	}
	f.say("alice", "one")
	if got := <-alices.ran; got != "one" {
		t.Fatalf("warm CLI got %q", got)
	}
	if got := f.next(); strings.Contains(got, "in line") || !strings.Contains(got, "warm: one") {
		t.Fatalf("bot wrote %q, want the turn's answer at once", got)
	}
	f.router.Wait()
}

// When memory is short (WarmPressure), a warm CLI coming in halves the
// pool, the oldest stopped first (issue 33: a warm CLI holds 150–370 MB).
func TestRouterDropsTheOldestWarmCLIsUnderPressure(t *testing.T) {
	t.Parallel()
	var short atomic.Bool
	f := newWarmFixture(t, true, func(cfg *core.RouterConfig) {
		cfg.WarmMax, cfg.WarmPressure, cfg.WarmMaxFrom = 4, short.Load, "chosen from 6.2 GiB of available memory"
		cfg.Access.Allow("fake", "carol", "dave")
	})
	alices, bobs, carols := f.start("alice"), f.start("bob"), f.start("carol")
	short.Store(true)
	f.say("dave", "/fake start")
	f.expect("conversation started")
	daves := receiveWarm(t, f.wp.warmed)
	closed(t, alices, "the oldest under pressure")
	closed(t, bobs, "the second oldest under pressure")
	waitWarm(t, f.routerFixture, 2)
	if carols.isClosed() || daves.isClosed() {
		t.Error("under pressure, the newer half of the warm CLIs was stopped too")
	}
	f.say("dave", "/status")
	f.expect("Warm CLIs: at most 4 in the bot, 2 waiting (chosen from 6.2 GiB of available memory)")
}

// A helper's turn (/ask) leaves the author's warm CLI alone: that CLI was
// started for the author's next turn, which the helper's turn did not
// change. Warming again after it, with the helper's message, replaced the
// author's CLI for nothing, and with a turn of other rights (a helper's
// message never bypasses approvals) made the author's next turn start
// cold.
func TestRouterKeepsTheAuthorsWarmCLIAcrossAHelpersTurn(t *testing.T) {
	t.Parallel()
	f := newWarmFixture(t, true, nil)
	w := f.start("alice")
	f.say("alice", "/ask other --write look around")
	f.expectAll("🤝 Fake other (asked, may write):", "echo: look around")
	f.router.Wait()
	f.say("alice", "one")
	select {
	case got := <-w.ran:
		if got != "one" {
			t.Errorf("the author's warm CLI ran %q, want one", got)
		}
	case <-w.closed:
		t.Fatal("the author's warm CLI was closed after the helper's turn")
	}
	f.expect("warm: one")
	f.router.Wait()
	f.router.Shutdown() // waits for every warm-up
	if n := len(f.wp.warmed); n != 1 {
		t.Errorf("%d CLIs warmed after the first, want 1: the one after alice's own turn", n)
	}
}

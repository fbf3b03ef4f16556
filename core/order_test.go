package core_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// heldTurns is a plugin run func whose turns wait for the test to release
// them, each answering with the plugin's id and the prompt.
type heldTurns struct{ release chan struct{} }

func (h heldTurns) run(id string) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		select {
		case <-h.release:
		case <-ctx.Done():
			return core.TurnResult{}, ctx.Err()
		}
		emit(core.TextEvent(id + " answers " + t.Prompt))
		return core.TurnResult{SessionID: id + "-" + t.Prompt}, nil
	}
}

// twoPlugins is a router with plugins "one" and "two" whose turns are held.
func twoPlugins(t *testing.T) (*routerFixture, *plugintest.Scripted, *plugintest.Scripted, heldTurns) {
	t.Helper()
	held := heldTurns{release: make(chan struct{})}
	one := &plugintest.Scripted{PluginID: "one", PluginName: "Fake one", Script: held.run("one")}
	two := &plugintest.Scripted{PluginID: "two", PluginName: "Fake two", Script: held.run("two")}
	reg, err := core.NewRegistry(one, two)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := core.NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	access.Allow("fake", "alice")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	clock := coretest.NewManualClock()
	router := core.NewRouter(ctx, core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock, QueueLimit: 2}, nil)
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	return &routerFixture{t: t, router: router, rec: rec, plugin: one, handle: router.Attach(rec), root: roots[0]}, one, two, held
}

// A message belongs to the conversation it was sent in: commands that would
// move a running or waiting turn to another plugin, session or directory
// are refused until it is over.
func TestRouterMessageKeepsItsConversation(t *testing.T) {
	t.Parallel()
	f, one, two, held := twoPlugins(t)
	f.say("alice", "/one start")
	f.expect("Fake one conversation started")
	f.say("alice", "hello")
	<-one.Started()
	f.say("alice", "hi")
	f.expect("Queued (1 waiting)")
	for _, cmd := range []string{"/two start", "/one start", "/resume abc", "/two resume abc", "/workdir set .", "/conversation end"} {
		f.say("alice", cmd)
		f.expect("A Fake one turn is running and 1 messages are waiting; /stop it first, or wait until it ends.")
	}
	f.say("alice", "/status") // reading is fine
	f.expect("Fake one in")
	close(held.release)
	f.expect("one answers hello")
	f.expect("one answers hi")
	f.router.Wait()
	if turn := <-one.Started(); turn.Prompt != "hi" || turn.SessionID != "one-hello" {
		t.Errorf("queued turn = %+v, want hi on plugin one, resuming one-hello", turn)
	}
	if len(two.Turns()) != 0 {
		t.Errorf("plugin two ran %d turns, want none", len(two.Turns()))
	}
	f.say("alice", "/two start")
	f.expect("Fake two conversation started")
}

// doneCounter counts calls of a message's Done and checks that the bot had
// written its answer by then.
type doneCounter struct {
	n      atomic.Int32
	writes atomic.Int32
}

func (d *doneCounter) message(f *routerFixture, user, text string) core.Message {
	return core.Message{Key: core.ConversationKey{Platform: "fake", User: user, Channel: "c"}, Text: text,
		Done: func() {
			d.writes.Store(int32(len(f.rec.Calls())))
			d.n.Add(1)
		}}
}

func TestRouterCallsDoneOnceOnEveryPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// before sets the conversation up; say is the message whose Done
		// is counted; then runs after it, before the count is read.
		before []string
		user   string
		say    string
		then   func(*routerFixture, heldTurns)
		// writes is how many writes the bot made by the time Done ran.
		writes int32
	}{
		{name: "refused user", user: "mallory", say: "hello", writes: 1},
		{name: "NUL byte", user: "alice", say: "a\x00b", writes: 1},
		{name: "command", user: "alice", say: "/help", writes: 1},
		{name: "no conversation", user: "alice", say: "hello", writes: 1},
		{name: "unknown command", user: "alice", say: "/nope", writes: 1},
		{name: "turn", before: []string{"/one start"}, user: "alice", say: "hello",
			then: func(f *routerFixture, h heldTurns) { close(h.release) }, writes: 2},
		{name: "queued then run", before: []string{"/one start", "first"}, user: "alice", say: "second",
			then: func(f *routerFixture, h heldTurns) { close(h.release) }, writes: 4},
		{name: "queue full", before: []string{"/one start", "a", "b", "c"}, user: "alice", say: "d",
			then: func(f *routerFixture, h heldTurns) { f.say("alice", "/stop") }, writes: 4},
		{name: "dropped by /stop", before: []string{"/one start", "a"}, user: "alice", say: "b",
			then: func(f *routerFixture, h heldTurns) { f.say("alice", "/stop") }, writes: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, one, _, held := twoPlugins(t)
			for _, text := range tc.before {
				f.say("alice", text)
				if text == "a" || text == "first" {
					<-one.Started()
				}
			}
			var d doneCounter
			f.handle(context.Background(), d.message(f, tc.user, tc.say))
			if tc.then != nil {
				tc.then(f, held)
			}
			f.router.Wait()
			if got := d.n.Load(); got != 1 {
				t.Fatalf("Done called %d times, want once", got)
			}
			if got := d.writes.Load(); got < tc.writes {
				t.Errorf("Done ran after %d writes, want its answer (%d writes) delivered first: %q", got, tc.writes, f.rec.Messages())
			}
		})
	}
}

// Several messages with Done, handled concurrently with /stop, each get
// exactly one call.
func TestRouterDoneUnderStop(t *testing.T) {
	t.Parallel()
	f, one, _, _ := twoPlugins(t)
	f.say("alice", "/one start")
	f.expect("started")
	var counters [3]doneCounter
	var wg sync.WaitGroup
	f.handle(context.Background(), counters[0].message(f, "alice", "first"))
	<-one.Started()
	for i := 1; i < 3; i++ {
		f.handle(context.Background(), counters[i].message(f, "alice", strings.Repeat("x", i)))
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.say("alice", "/stop")
	}()
	wg.Wait()
	f.router.Wait()
	for i := range counters {
		if got := counters[i].n.Load(); got != 1 {
			t.Errorf("message %d: Done called %d times, want once", i, got)
		}
	}
}

// A reply's footer shows once the conversation is released: on a
// platform that streams, whoever sees it may end the conversation at once.
func TestTheFooterComesOnceTheConversationIsFree(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureLimited(t, echo, nil, nil, core.Limits{}) // every change streams
	rec := f.rec
	f.say("alice", "/fake start")
	f.expect("conversation started")
	for i := range 20 {
		f.say("alice", "hello")
		for c := range rec.Written() {
			if strings.Contains(c.Text, "— ") {
				break
			}
		}
		f.say("alice", "/conversation end")
		for c := range rec.Written() {
			if strings.Contains(c.Text, "Conversation ended") {
				break
			}
			if strings.Contains(c.Text, "is running") {
				t.Fatalf("round %d: seen the footer, /conversation end was told %q", i, c.Text)
			}
		}
		f.say("alice", "/fake start")
		f.expect("conversation started")
	}
}

package plugintest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// patience bounds how long a test waits on a scripted plugin, so that a
// bug fails the test instead of hanging it.
const patience = 20 * time.Second

// Scripted is a core.Plugin whose turns a test scripts, for the router's
// and the platforms' tests (the real CLIs have their own fakes: the model
// servers). By default a turn answers "echo: <prompt>" at once, in the
// turn's session or a new "session-N"; Script replaces that, and HandOver
// as Script gives each turn to the test to drive event by event. Set the
// fields before the plugin is used; it is safe for concurrent use.
type Scripted struct {
	// PluginID and PluginName default to "claude" and "Claude Code".
	PluginID, PluginName string
	// Script runs each turn; nil is Echo.
	Script func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error)
	// List lists past conversations in a workdir; nil lists none.
	List func(ctx context.Context, workdir string) ([]core.ConversationInfo, error)
	// CLIModes are the plugin's own permission modes (core.ModeProvider).
	CLIModes []core.Mode
	// Unrecorded makes Run keep no record of its turns (Started, Turns
	// and WaitTurns see none), for a benchmark, whose millions of turns a
	// record would hold.
	Unrecorded bool
	// ReadOnly is what ReadOnlyMeans says of the plugin's means to run a
	// read-only turn (core.ReadOnlyPlugin); empty means it has none. Run
	// runs a read-only turn as any other, for a test to see: a type that
	// embeds Scripted may say otherwise of its means.
	ReadOnly string
	// Steerable makes HandOver's turns take messages into them (open
	// their core.Inbox), as Claude's and Codex's do: the test receives
	// them with LiveTurn.Steered.
	Steerable bool

	once     sync.Once
	started  chan core.Turn
	handed   chan *LiveTurn
	changes  chan struct{} // closed and replaced when a turn starts
	mu       sync.Mutex
	turns    []core.Turn
	sessions int
}

var (
	_ core.Plugin         = (*Scripted)(nil)
	_ core.ModeProvider   = (*Scripted)(nil)
	_ core.ReadOnlyPlugin = (*Scripted)(nil)
)

func (p *Scripted) init() {
	p.once.Do(func() {
		p.started = make(chan core.Turn, 4096)
		p.handed = make(chan *LiveTurn)
		p.changes = make(chan struct{})
	})
}

func (p *Scripted) ID() string {
	if p.PluginID == "" {
		return "claude"
	}
	return p.PluginID
}

func (p *Scripted) Name() string {
	if p.PluginName == "" {
		return "Claude Code"
	}
	return p.PluginName
}

// Run records the turn, announces it on Started and runs the script.
func (p *Scripted) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	if !p.Unrecorded {
		p.record(t)
	}
	if p.Script == nil {
		return p.Echo(ctx, t, emit)
	}
	return p.Script(ctx, t, emit)
}

func (p *Scripted) record(t core.Turn) {
	p.init()
	p.mu.Lock()
	p.turns = append(p.turns, t)
	close(p.changes)
	p.changes = make(chan struct{})
	p.mu.Unlock()
	select {
	case p.started <- t:
	default: // nobody reads them: Turns has them all
	}
}

// ReadOnlyMeans returns ReadOnly, ok when it is set.
func (p *Scripted) ReadOnlyMeans() (string, bool) { return p.ReadOnly, p.ReadOnly != "" }

// Modes returns CLIModes.
func (p *Scripted) Modes() []core.Mode { return p.CLIModes }

// Conversations lists past conversations with List.
func (p *Scripted) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	if p.List == nil {
		return nil, nil
	}
	return p.List(ctx, workdir)
}

// History is a List of infos, whatever the workdir.
func History(infos []core.ConversationInfo) func(context.Context, string) ([]core.ConversationInfo, error) {
	return func(context.Context, string) ([]core.ConversationInfo, error) { return slices.Clone(infos), nil }
}

// Echo answers "echo: <prompt>" in the turn's Session.
func (p *Scripted) Echo(_ context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	emit(core.TextEvent("echo: " + t.Prompt))
	return core.TurnResult{SessionID: p.Session(t)}, nil
}

// Session is the session a turn runs in: the one it resumes, or a new
// "session-N", N counting the plugin's new sessions from 1.
func (p *Scripted) Session(t core.Turn) string {
	if t.SessionID != "" {
		return t.SessionID
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions++
	return fmt.Sprintf("session-%d", p.sessions)
}

// Started receives every turn as it starts (the first 4096 unread).
func (p *Scripted) Started() <-chan core.Turn {
	p.init()
	return p.started
}

// Turns returns every turn run so far, in the order they started.
func (p *Scripted) Turns() []core.Turn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.turns)
}

// WaitTurns waits until n turns have started and returns them.
func (p *Scripted) WaitTurns(t testing.TB, n int) []core.Turn {
	t.Helper()
	p.init()
	timeout := time.NewTimer(patience)
	defer timeout.Stop()
	for {
		p.mu.Lock()
		turns, changed := slices.Clone(p.turns), p.changes
		p.mu.Unlock()
		if len(turns) >= n {
			return turns
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("waited for %d turns, have %d", n, len(turns))
		}
	}
}

// LiveTurn is a turn handed to the test (HandOver): the test emits its
// events and ends it.
type LiveTurn struct {
	core.Turn
	events  chan core.Event
	end     chan core.TurnResult
	steered chan core.Steering
}

// HandOver is a Script that hands each turn to the test (Next, Handed)
// and runs until the test ends it or the turn is cancelled.
func (p *Scripted) HandOver(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	p.init()
	lt := &LiveTurn{Turn: t, events: make(chan core.Event), end: make(chan core.TurnResult), steered: make(chan core.Steering, 64)}
	if p.Steerable {
		t.Inbox.Open(func(s core.Steering) error {
			select {
			case lt.steered <- s:
				return nil
			default:
				return core.ErrNotTaken
			}
		})
		defer t.Inbox.Close()
	}
	select {
	case p.handed <- lt:
	case <-ctx.Done():
		return core.TurnResult{}, context.Cause(ctx)
	}
	for {
		select {
		case ev := <-lt.events:
			emit(ev)
		case res := <-lt.end:
			return res, nil
		case <-ctx.Done():
			return core.TurnResult{}, context.Cause(ctx)
		}
	}
}

// Handed receives the turns HandOver hands to the test.
func (p *Scripted) Handed() <-chan *LiveTurn {
	p.init()
	return p.handed
}

// Next waits for the next turn HandOver hands to the test.
func (p *Scripted) Next(t testing.TB) *LiveTurn {
	t.Helper()
	select {
	case lt := <-p.Handed():
		return lt
	case <-time.After(patience):
		t.Fatal("no turn was handed over")
		return nil
	}
}

// Emit passes ev to the turn's emit, once the turn takes it.
func (lt *LiveTurn) Emit(t testing.TB, ev core.Event) {
	t.Helper()
	select {
	case lt.events <- ev:
	case <-time.After(patience):
		t.Fatal("the turn did not take an event: is it still running?")
	}
}

// Events is where the turn takes its events, for a test that emits from
// a goroutine of its own (where it may not call t.Fatal).
func (lt *LiveTurn) Events() chan<- core.Event { return lt.events }

// Steered waits for the next message taken into the turn (Steerable).
func (lt *LiveTurn) Steered(t testing.TB) core.Steering {
	t.Helper()
	select {
	case s := <-lt.steered:
		return s
	case <-time.After(patience):
		t.Fatal("no message was taken into the turn")
		return core.Steering{}
	}
}

// End ends the turn with res.
func (lt *LiveTurn) End(t testing.TB, res core.TurnResult) {
	t.Helper()
	select {
	case lt.end <- res:
	case <-time.After(patience):
		t.Fatal("the turn did not end: is it still running?")
	}
}

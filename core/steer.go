package core

import (
	"context"
	"errors"
	"sync"
)

// What a message written while its conversation's turn runs does
// (BUSY, RouterConfig.Busy).
const (
	// BusySteer adds it to the running turn where the CLI can take it
	// there, else it waits.
	BusySteer = "steer"
	// BusyQueue has it wait for the turn to end, with Steer and Send now
	// buttons.
	BusyQueue = "queue"
)

// Steering is a message added to a running turn: the agent reads it at
// its next step, inside the same turn.
type Steering struct {
	// From is its author's id: the router steers a message only into a
	// turn it may join (Router.permit), and a runner takes it only into
	// a turn of the same author (Turn.Author).
	From   string
	Prompt string
	// Images are absolute paths of images sent with it, as Turn.Images.
	Images []string
}

// Inbox takes messages into a running turn. The router sends them; a
// plugin whose CLI can take a message mid-turn opens it once the CLI has
// the turn's own message, and closes it when the turn's end is in sight.
// The zero value is closed; it is safe for concurrent use.
type Inbox struct {
	mu     sync.Mutex
	take   func(Steering) error
	closed bool
	watch  func(taking bool)
}

// ErrNotTaken says a running turn cannot take a message: its CLI has no
// way to, or the turn is ending.
var ErrNotTaken = errors.New("the running turn cannot take a message")

// Open makes take receive the messages sent to the turn, until Close. A
// closed inbox stays closed. take returns nil only if the turn will read
// the message; it orders itself against the turn's end, which the plugin
// alone sees.
func (b *Inbox) Open(take func(Steering) error) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.take = take
		if b.watch != nil {
			b.watch(true)
		}
	}
}

// Watch has f told, in order, each time the inbox opens and when it
// closes: a runner tells its gateway, whose own inbox for the turn then
// takes messages. f must not block; call Watch before the turn starts.
func (b *Inbox) Watch(f func(taking bool)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.watch = f
}

// Close stops the inbox taking messages.
func (b *Inbox) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.watch != nil && b.take != nil {
		b.watch(false)
	}
	b.closed, b.take = true, nil
}

// Send gives s to the running turn. It returns nil only if the turn took
// it; ErrNotTaken (or the plugin's error) if it did not.
func (b *Inbox) Send(s Steering) error {
	if b == nil {
		return ErrNotTaken
	}
	b.mu.Lock()
	take := b.take
	b.mu.Unlock()
	if take == nil {
		return ErrNotTaken
	}
	return take(s)
}

// Taking reports whether the inbox takes messages now.
func (b *Inbox) Taking() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.take != nil
}

// steer gives m to the running turn of its conversation, q, and returns
// what to tell the chat. It reports false when the turn cannot take it:
// the message then waits as any other, with its files as saved already
// (m.saved). Where its files could not be saved, ans is the error, and m
// is neither taken nor done.
func (r *Router) steer(ctx context.Context, a *attached, q *runningTurn, m *queued) (ok bool, ans answer) {
	inbox, conv, workdir := r.turns.inboxOf(q)
	if !inbox.Taking() {
		return false, answer{}
	}
	s := Steering{From: m.m.Author(), Prompt: m.m.Text}
	if len(m.m.Files) > 0 {
		var err error
		if s.Prompt, s.Images, err = r.files.takeFiles(ctx, a, m.m, conv, workdir); err != nil {
			return true, answer{err: err}
		}
	}
	if err := inbox.Send(s); err != nil {
		switch {
		case IsUserError(err):
			m.notSteered = UserMessage(err)
		case !errors.Is(err, ErrNotTaken):
			r.logger.Warn("steer a running turn", "id", m.id, "conversation", m.m.Key.String(), "err", err)
		}
		if len(m.m.Files) > 0 {
			m.saved = &s // its files are saved: the message waits as they are
		}
		return false, answer{}
	}
	r.obs.Record(Record{Kind: RecordSteered, ID: m.id, Time: r.clock.Now(), Key: m.m.Key, Author: m.m.Author(),
		Plugin: conv.Plugin, Workdir: workdir, Text: m.m.Text, Outcome: OutcomeOK})
	// Its platform learns it was handled once the turn is delivered, as
	// an answer's does.
	if !r.turns.hold(m.m.Key, q, m.done) {
		m.done()
	}
	return true, answer{text: "↪ Added to the running turn: the agent reads it at its next step."}
}

// steerWaiting gives the waiting message id to the running turn (its
// Steer button), as steer does; only its author or an admin may press it,
// and only a message that may join that turn (Router.permit) goes.
func (c *call) steerWaiting(id string) (string, error) {
	r, a, m := c.r, c.a, c.m
	if c.may.answer != nil {
		return "", c.may.answer
	}
	q, next, err := r.turns.takeWaiting(m.Key.Platform, id, m.Author(), c.who.Admin,
		func(waiting, running *queued) error { return waiting.may.steerInto(running) })
	switch {
	case IsUserError(err):
		return "", Errorf("that message waits for the turn to end: %s", UserMessage(err))
	case errors.Is(err, errNotAuthor):
		return "", Errorf("only its author (%s) or an admin can add that message to the running turn", next.m.AuthorName())
	case errors.Is(err, errNotTaking):
		return "", Errorf("%s cannot take a message in the middle of a turn: it waits for the turn to end", r.cfg.Plugins.name(next.conv.Plugin))
	case err != nil:
		return "", errNoLongerWaiting
	}
	ok, ans := r.steer(r.turnCtx, a, q, &next)
	if !ok {
		// The turn ended meanwhile: it runs next.
		r.enqueue(a, next, BusyQueue)
		return "", nil
	}
	r.say(a, next.m.Target(), next.id, ans)
	if ans.err != nil {
		next.done()
	}
	return "", nil
}

// cmdBusyMessage runs /steer and /queue: the text as a message, added to the
// running turn or waiting for it to end whatever BUSY says; /steer of a
// waiting message's id is its Steer button.
func cmdBusyMessage(c *call) (string, error) {
	r, a, m, cmd, conv := c.r, c.a, c.m, c.cmd, c.conv
	if cmd.Name == CmdSteer && isMessageID(cmd.Arg) {
		return c.steerWaiting(cmd.Arg)
	}
	if !c.hasConv {
		return r.noConversation(), nil
	}
	busy := BusyQueue
	if cmd.Name == CmdSteer {
		busy = BusySteer
	}
	m.Text = ForCLI(cmd.Arg)
	r.enqueue(a, queued{m: m, id: newID(), conv: conv, may: c.may, done: func() {}}, busy)
	return "", nil
}

package core

import (
	"context"
	"errors"
)

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
// and only a message that may join that turn (Router.permitsOf) goes.
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

// steerInto returns nil if p's message may be added to the running turn
// of into (nil: none runs), else why not.
func (p permits) steerInto(into *queued) error {
	switch {
	case p.origin.Kind != OriginPerson:
		return Errorf("a message sent by a %s starts a turn of its own", p.origin.Kind)
	case into == nil:
		return Errorf("no turn is running")
	case into.may.origin.User == p.origin.User:
		return nil
	case !p.sameTurn(into.may):
		return Errorf("the running turn is %s's, and yours would not run the same (mode, approvals, workdirs or budget)", into.m.AuthorName())
	}
	return nil
}

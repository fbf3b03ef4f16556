package core

import (
	"context"
)

// call is one message as the router handles it, built once by handle
// (newCall) once the message is admitted: the message and its origin
// (Message.Origin), the platform it came from, its author's rights and
// the conversation it was written in, if any. A command is a function
// over it (CommandSpec.Run), so that no handler looks the conversation up
// again or asks again whether its author is an admin.
type call struct {
	ctx context.Context
	r   *Router
	a   *attached
	// m is the message; a /start that opens a thread moves it there.
	m  Message
	id string
	// who are the rights of m's author; may is what m may do, decided
	// once (Router.permitsOf).
	who Rights
	may permits
	// conv is m's conversation as it was when m arrived; hasConv says
	// whether there was one.
	conv    Conversation
	hasConv bool
	// cmd is the command m is, and spec its entry in the table.
	cmd  Command
	spec CommandSpec
	// done is m's Done; an answer keeps it (tookDone) until its turn
	// ends.
	done     func()
	tookDone bool
}

// newCall builds m's call, deciding what m may do (permitsOf).
func (r *Router) newCall(ctx context.Context, a *attached, m Message, id string, done func()) *call {
	may := r.permitsOf(m)
	c := &call{ctx: ctx, r: r, a: a, m: m, id: id, done: done, who: Rights{Admin: may.admin}, may: may}
	c.conv, c.hasConv = r.convs.Get(m.Key)
	return c
}

// place is the machine c's conversation works on, narrowed to c's author.
func (c *call) place() Place { return c.r.placeOf(c.conv, c.who) }

// command runs c's message as a slash command and records it. An answer
// to a question keeps c.done until the turn ends (c.tookDone).
func (r *Router) command(c *call) {
	started := r.clock.Now()
	m := c.m
	rec := Record{Kind: RecordCommand, ID: c.id, Time: started, Key: m.Key, Author: m.Author(), Text: m.Text, Outcome: OutcomeOK}
	cmd, spec, err := r.cfg.Plugins.Commands().parse(m.Text)
	if err == nil {
		c.cmd, c.spec = cmd, spec
		rec.Command = cmd.line()
		err = c.run()
	}
	rec.Key = c.m.Key // a /start may have moved it to a thread of its own
	if conv, ok := r.convs.Get(c.m.Key); ok {
		rec.Plugin, rec.Workdir, rec.SessionID = conv.Plugin, conv.Shown(conv.Workdir), conv.SessionID
	}
	if err != nil {
		rec.Outcome = OutcomeError
		r.replyError(c.a, c.m.Target(), c.id, err)
	}
	rec.Duration = r.clock.Now().Sub(started)
	r.obs.Record(rec)
}

// run applies c.spec's rules around its handler: who may answer, that a
// command which moves the conversation waits for its turns, the warm CLI
// of a conversation moved, and the handler's answer sent.
func (c *call) run() error {
	s, r := c.spec, c.r
	if s.Answer {
		// A person's schedule sends commands, never answers: it was not
		// written with the question in front of them.
		if c.may.answer != nil {
			return c.may.answer
		}
	} else {
		r.logger.Info("command", "id", c.id, "conversation", c.m.Key.String(), "command", string(c.cmd.Name), "plugin", c.cmd.Plugin)
	}
	moves := s.Changes && !(s.ShowsBare && c.cmd.Arg == "")
	if moves {
		if why := r.busy(c.m.Key); why != "" {
			return Errorf("%s", why)
		}
	}
	if s.NeedsConversation && !c.hasConv {
		r.reply(c.a, c.m.Target(), r.noConversation())
		return nil
	}
	if s.Run == nil {
		return Errorf("command %q is not implemented", c.cmd.Name)
	}
	text, err := s.Run(c)
	if err != nil {
		return err
	}
	if moves && s.Rewarm {
		c.rewarm()
	}
	if text != "" {
		r.reply(c.a, c.m.Target(), text)
	}
	return nil
}

// rewarm drops the warm CLI of c's conversation as it was and starts the
// one of the session (or workdir) it moved to.
func (c *call) rewarm() {
	c.r.warm.drop(c.m.Key)
	c.r.warmUp(c.m, c.may)
}

// permitsOf decides what m may do.
func (r *Router) permitsOf(m Message) permits {
	o := m.Origin()
	admin := r.cfg.Access.RightsOf(m).Admin
	b := r.cfg.Budgets
	p := permits{origin: o, admin: admin, ownBudget: (b.UserDailyUSD > 0 || b.UserDailyTokens > 0) && (b.Admins || !admin)}
	if o.Kind != OriginPerson && o.Kind != OriginSchedule {
		p.command = Errorf("a message sent by a %s is never a command", o.Kind)
	}
	if o.Kind != OriginPerson {
		p.answer = Errorf("only a person's own message or button press acts on a running turn, not a %s's", o.Kind)
	}
	switch {
	case o.Kind == OriginAgent || o.Kind == OriginAgentSchedule:
		p.bypass = Errorf("a turn the agent set runs no mode that skips approvals")
	case o.Kind == OriginHelper:
		p.bypass = Errorf("a turn another agent of the conversation caused runs no mode that skips approvals")
	case !r.cfg.AllowBypassModes && !admin:
		p.bypass = Errorf("only admins may use a mode that skips approvals")
	}
	return p
}

package core

import (
	"errors"
	"fmt"
)

// enqueue runs m now or, while its conversation's turn runs, adds it to
// that turn or queues it behind, as busy says (BusySteer, BusyQueue; ""
// for RouterConfig.Busy), and tells the chat what became of it. It
// reports whether m was taken (its done is then called once its turn is
// over or it is dropped).
func (r *Router) enqueue(a *attached, m queued, busy string) bool {
	taken, ans := r.line(a, m, busy)
	r.say(a, m.m.Target(), m.id, ans)
	return taken
}

// line is enqueue but for the chat: it returns what to tell it. m is
// recorded (takenMessages) before it is placed, until its done, so that a
// process that dies with it waiting, running or its reply not delivered
// leaves its record.
func (r *Router) line(a *attached, m queued, busy string) (taken bool, ans answer) {
	ended, done := r.taken.take(m), m.done
	m.done = func() { ended(); done() }
	taken, ans = r.place(a, m, busy)
	if !taken {
		ended()
	}
	return taken, ans
}

// place is line but for the record.
func (r *Router) place(a *attached, m queued, busy string) (taken bool, ans answer) {
	steer := busy != BusyQueue && (busy == BusySteer || r.cfg.Busy == BusySteer)
	p := r.turns.place(a, m, steer)
	var joins error // whether m may join the running turn
	if p.how == placeSteer || p.how == placeQueued {
		joins = m.may.steerInto(p.running)
	}
	switch p.how {
	case placeRefused:
		r.obs.Record(Record{Kind: RecordRejected, ID: m.id, Time: r.clock.Now(), Key: m.m.Key, Author: m.m.Author(), Outcome: OutcomeShutdown, Text: m.m.Text})
		return false, answer{text: "The bot is restarting and starts no new turns; this message was not sent. Send it again in a minute: the conversation continues."}
	case placeSteer:
		if joins != nil {
			m.notSteered = UserMessage(joins)
		} else if ok, ans := r.steer(r.turnCtx, a, p.q, &m); ok {
			return ans.err == nil, ans
		}
		return r.place(a, m, BusyQueue)
	case placeFull:
		return false, answer{text: fmt.Sprintf("A turn is running and %d messages are waiting; this one was not queued. Wait, or /stop.", p.waiting)}
	case placeQueued:
		ans := answer{text: fmt.Sprintf("Queued (%d waiting): it runs when the current turn ends.", p.waiting),
			choices: []Choice{{Label: "Send now", Command: "/now " + m.id}},
			typed:   "/now " + m.id + " stops the running turn and runs this message next."}
		if m.notSteered != "" {
			ans.text += " It was not added to the running turn: " + m.notSteered + "."
		}
		if p.steerable && joins == nil {
			ans.choices = append([]Choice{{Label: "Steer", Command: "/steer " + m.id}}, ans.choices...)
			ans.typed = "/steer " + m.id + " adds it to the running turn; " + ans.typed
		}
		return true, ans
	}
	go r.runQueued(a, p.q, m)
	return true, answer{}
}

// runQueued runs m in q and then every message queued behind it, one at
// a time. A turn's conversation is released before its final reply is
// delivered, so a message sent after seeing the reply is never told to
// wait.
func (r *Router) runQueued(a *attached, q *runningTurn, m queued) {
	defer r.turns.exited()
	for {
		deliver := r.runTurn(a, q, m)
		end := r.turns.next(q, r.turnCtx.Err() != nil)
		// While the reply is delivered; a helper's turn leaves the
		// author's warm CLI as it was: it did not run it.
		if !end.more && end.idle && !m.side.helps() {
			r.warmUp(m.m, m.may)
		}
		deliver()
		m.done()
		finish(end.held)
		if !end.more {
			if len(end.dropped) > 0 {
				r.reply(a, m.m.Target(), fmt.Sprintf("The bot is restarting: %d queued messages were not run. Send them again once it is back.", len(end.dropped)))
				finishAll(end.dropped)
			}
			return
		}
		m = end.next
	}
}

// cmdNow moves the queued message id to the front of its conversation's
// queue and interrupts the running turn, so that it runs next. Only the
// message's author or an admin may. The message is looked up among the
// platform's queues, not only m's conversation: where a conversation is
// its author's own (a Discord thread, a Telegram topic), an admin's press
// on the author's button comes from another conversation.
func cmdNow(c *call) (string, error) {
	r, m, id := c.r, c.m, c.cmd.Arg
	by := m.Author()
	next, err := r.turns.sendNow(m.Key.Platform, id, by, c.who.Admin)
	switch {
	case errors.Is(err, errNotAuthor):
		return "", Errorf("only its author (%s) or an admin can send that message now", next.m.AuthorName())
	case err != nil:
		return "", errNoLongerWaiting
	case next.m.Author() != by:
		return fmt.Sprintf("Interrupting the running turn: %s's message runs next.", next.m.AuthorName()), nil
	}
	return "Interrupting the running turn: your message runs next.", nil
}

// stop cancels the running turn of k and drops its queue. It returns how
// many queued messages were dropped and whether a turn was running.
func (r *Router) stop(k ConversationKey) (dropped int, running bool) {
	r.warm.drop(k)
	pending, running := r.turns.stop(k)
	finishAll(pending)
	return len(pending), running
}

// busy returns why k's conversation cannot be changed now (a turn running
// or messages waiting: changing it would move them), or "".
func (r *Router) busy(k ConversationKey) string {
	st, ok := r.turns.state(k)
	if !ok {
		return ""
	}
	msg := fmt.Sprintf("A %s turn is running", r.cfg.Plugins.name(st.plugin))
	if st.waiting > 0 {
		msg += fmt.Sprintf(" and %d messages are waiting", st.waiting)
	}
	return msg + "; /stop it first, or wait until it ends."
}

// followUnfinished goes on with the replies of the turns on runners that
// an earlier process of the bot was streaming into a's chats: each runs
// as the turn it was, its conversation's agent's or a helper's
// (Turn.Side), with the rest of its events; the chat of one that never
// started there is told so. It returns the conversations whose turns it
// follows or told of.
func (r *Router) followUnfinished(a *attached) map[ConversationKey]bool {
	followed := map[ConversationKey]bool{}
	if r.cfg.Runners == nil {
		return followed
	}
	var notices []lostNotice
	for _, u := range r.cfg.Runners.Unfinished(a.p.Name()) {
		m := u.Message
		if u.NotStarted {
			// Its message's record (LocalTurns), if a killed process
			// left one, is this turn's: told once, here.
			followed[m.Key] = true
			r.logger.Warn("turn on a runner lost: the process stopped before the runner started it", "runner", u.Runner, "conversation", m.Key.String())
			notices = append(notices, notStartedNotice(u))
			continue
		}
		side, pair, err := readSide(u.Side)
		if err != nil {
			r.logger.Warn("turn on a runner abandoned", "runner", u.Runner, "conversation", m.Key.String(), "err", err)
			u.Abandon()
			continue
		}
		m.origin = OriginRunner
		if side != nil {
			// A helper's turn, or findings sent to the author, stays the
			// bot's on its person's behalf in every decision.
			m.origin = OriginHelper
		}
		conv, ok := r.convs.Get(m.Key)
		qm := queued{m: m, id: newID(), conv: conv, may: r.permitsOf(m), done: func() {}, follow: u.Plugin, side: side}
		if !ok || conv.Runner != u.Runner || qm.pluginOf(conv) != u.Plugin.ID() {
			r.logger.Info("turn on a runner abandoned: its conversation ended or moved", "runner", u.Runner, "conversation", m.Key.String())
			u.Abandon()
			continue
		}
		r.side.resumeLoop(m.Key, conv, side, pair)
		r.enqueue(a, qm, "")
		followed[m.Key] = true
	}
	go func() {
		for _, n := range notices {
			r.say(a, n.to, "", n.ans)
		}
	}()
	return followed
}

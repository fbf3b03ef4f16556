package core

import (
	"context"
	"fmt"
	"slices"
)

// runningTurn exists only while a conversation has a turn running.
type runningTurn struct {
	a       *attached
	target  Target
	pending []queued
	cancel  context.CancelCauseFunc
	// inbox takes messages into the running turn; conv and workdir are
	// where it runs, for the files sent with them.
	inbox   *Inbox
	conv    Conversation
	workdir string
	// plugin and token of the running turn, for the shutdown notice.
	plugin string
	token  string
	// background is the running turn's background work (r.mu).
	background []string
	// held are the Done of answers to the running turn's questions,
	// called once the turn is delivered.
	held []func()
}

// queued is a message waiting for its turn, with its correlation id and
// the conversation it was written to: a message belongs to the
// conversation it was sent in, whatever happens to the chat meanwhile.
type queued struct {
	m    Message
	id   string
	conv Conversation
	// done is m's Done, called once the message is delivered or dropped.
	done func()
	// follow, for a turn an earlier process of the bot left running on a
	// runner, is what streams the rest of it (Runners.Unfinished).
	follow Plugin
	// saved, for a message whose files were saved for a running turn
	// that could not take it after all (steer), is its prompt and images
	// as they were saved: its turn saves nothing again.
	saved *Steering
}

// enqueue runs m now or, while its conversation's turn runs, adds it to
// that turn or queues it behind, as busy says (BusySteer, BusyQueue; ""
// for RouterConfig.Busy). It reports whether m was taken (its done is
// then called once its turn is over or it is dropped); a message refused
// here is answered at once.
func (r *Router) enqueue(a *attached, m queued, busy string) bool {
	r.mu.Lock()
	if r.windingDown {
		r.mu.Unlock()
		r.obs.Record(Record{Kind: RecordRejected, ID: m.id, Time: r.clock.Now(), Key: m.m.Key, Author: m.m.Author(), Outcome: OutcomeShutdown, Text: m.m.Text})
		r.reply(a, m.m.Target(), "The bot is restarting and starts no new turns; this message was not sent. Send it again in a minute: the conversation continues.")
		return false
	}
	q, running := r.queues[m.m.Key]
	if running && busy != BusyQueue && (busy == BusySteer || r.cfg.Busy == BusySteer) {
		r.mu.Unlock()
		if r.steer(r.turnCtx, a, q, &m) {
			return true
		}
		return r.enqueue(a, m, BusyQueue)
	}
	if running {
		if len(q.pending) >= r.cfg.QueueLimit {
			r.mu.Unlock()
			r.reply(a, m.m.Target(), fmt.Sprintf("A turn is running and %d messages are waiting; this one was not queued. Wait, or /stop.", len(q.pending)))
			return false
		}
		q.pending = append(q.pending, m)
		n, steerable := len(q.pending), q.inbox.Taking()
		r.mu.Unlock()
		choices := []Choice{{Label: "Send now", Command: "/now " + m.id}}
		typed := "/now " + m.id + " stops the running turn and runs this message next."
		if steerable {
			choices = append([]Choice{{Label: "Steer", Command: "/steer " + m.id}}, choices...)
			typed = "/steer " + m.id + " adds it to the running turn; " + typed
		}
		r.offer(a, m.m.Target(), fmt.Sprintf("Queued (%d waiting): it runs when the current turn ends.", n), choices, typed)
		return true
	}
	q = &runningTurn{a: a, target: m.m.Target(), plugin: m.conv.Plugin}
	r.queues[m.m.Key] = q
	r.wg.Add(1)
	r.mu.Unlock()
	go r.runQueued(a, m)
	return true
}

// finish calls every function in fs.
func finish(fs []func()) {
	for _, f := range fs {
		f()
	}
}

// finishAll calls done of every message in ms.
func finishAll(ms []queued) {
	for _, m := range ms {
		m.done()
	}
}

// runQueued runs m and then every message queued behind it, one at a time.
// A turn's conversation is released before its final reply is delivered,
// so a message sent after seeing the reply is never told to wait.
func (r *Router) runQueued(a *attached, m queued) {
	defer r.wg.Done()
	key := m.m.Key
	for {
		deliver := r.runTurn(a, m)
		r.mu.Lock()
		q := r.queues[key]
		if len(q.pending) == 0 || r.turnCtx.Err() != nil || r.windingDown {
			dropped := q.pending
			delete(r.queues, key)
			held := q.held
			idle := r.turnCtx.Err() == nil && !r.windingDown
			r.mu.Unlock()
			if idle {
				r.warmUp(m.m) // while the reply is delivered
			}
			deliver()
			m.done()
			finish(held)
			if len(dropped) > 0 {
				r.reply(a, m.m.Target(), fmt.Sprintf("The bot is restarting: %d queued messages were not run. Send them again once it is back.", len(dropped)))
				finishAll(dropped)
			}
			return
		}
		next := q.pending[0]
		q.pending = q.pending[1:]
		held := q.held
		q.held = nil
		r.mu.Unlock()
		deliver()
		m.done()
		finish(held)
		m = next
	}
}

// sendNow moves the queued message id to the front of its conversation's
// queue and interrupts the running turn, so that it runs next. Only the
// message's author or an admin may. The message is looked up among the
// platform's queues, not only m's conversation: where a conversation is
// its author's own (a Discord thread, a Telegram topic), an admin's press
// on the author's button comes from another conversation.
func (r *Router) sendNow(m Message, id string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, i := r.waiting(m.Key.Platform, id)
	if q == nil {
		return "", Errorf("that message is no longer waiting: it has run already, or was dropped")
	}
	next := q.pending[i]
	by := m.Author()
	if next.m.Author() != by && !r.cfg.Access.IsAdmin(m.Key.Platform, by) {
		return "", Errorf("only its author (%s) or an admin can send that message now", next.m.AuthorName())
	}
	q.pending = append(q.pending[:i:i], q.pending[i+1:]...)
	q.pending = append([]queued{next}, q.pending...)
	if q.cancel != nil {
		q.cancel(ErrSentNow)
	}
	if next.m.Author() != by {
		return fmt.Sprintf("Interrupting the running turn: %s's message runs next.", next.m.AuthorName()), nil
	}
	return "Interrupting the running turn: your message runs next.", nil
}

// waiting returns the queue of platform's conversations in which message
// id waits, and its index there; nil if it waits nowhere. r.mu is held.
func (r *Router) waiting(platform, id string) (*runningTurn, int) {
	for k, q := range r.queues {
		if k.Platform != platform {
			continue
		}
		if i := slices.IndexFunc(q.pending, func(p queued) bool { return p.id == id }); i >= 0 {
			return q, i
		}
	}
	return nil, -1
}

// stop cancels the running turn of k and drops its queue. It returns how
// many queued messages were dropped and whether a turn was running.
func (r *Router) stop(k ConversationKey) (dropped int, running bool) {
	r.warm.drop(k)
	r.mu.Lock()
	q, ok := r.queues[k]
	if !ok {
		r.mu.Unlock()
		return 0, false
	}
	pending := q.pending
	q.pending = nil
	if q.cancel != nil {
		q.cancel(ErrStopped)
	}
	r.mu.Unlock()
	finishAll(pending)
	return len(pending), true
}

// busy returns why k's conversation cannot be changed now (a turn running
// or messages waiting: changing it would move them), or "".
func (r *Router) busy(k ConversationKey) string {
	r.mu.Lock()
	q, ok := r.queues[k]
	var plugin string
	var waiting int
	if ok {
		plugin, waiting = q.plugin, len(q.pending)
	}
	r.mu.Unlock()
	if !ok {
		return ""
	}
	msg := fmt.Sprintf("A %s turn is running", r.pluginName(plugin))
	if waiting > 0 {
		msg += fmt.Sprintf(" and %d messages are waiting", waiting)
	}
	return msg + "; /stop it first, or wait until it ends."
}

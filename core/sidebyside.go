// Agents side by side (issue 44): a conversation has one author, the
// plugin it was started with, and may have helper agents, other plugins
// each with a session of its own, which /ask asks, /review has review
// the author's work, and /pair has review it after every turn. A
// helper's turn is a turn like any other of the conversation (the same
// queue, approvals, costs, budgets and limits), made by the bot on its
// person's behalf (OriginHelper), so that it is never their voice.

package core

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/jake-bot/jake-bot/core/recent"
)

// record is side, a turn of key's conversation, as Turn.Side keeps it;
// nil for a turn of a person's own.
func (s *sideBySide) record(key ConversationKey, side *sideTurn) json.RawMessage {
	if side == nil {
		return nil
	}
	rec := sideRecord{Helper: side.helper, ReadOnly: side.readOnly, Label: side.label}
	if side.review != nil {
		rec.Review = &reviewRecord{Author: side.review.author, Parts: side.review.parts}
	}
	if l, ok := s.loop(key); side.pair && ok {
		rec.Pair = &pairRecord{Reviewer: l.reviewer, Round: l.round, Rounds: l.rounds}
	}
	data, _ := json.Marshal(rec) // strings, ints and bools: it cannot fail
	return data
}

// resumeLoop goes on with the pair loop of conv (key's) that side, a
// turn an earlier process of the bot left on a runner, was a step of,
// as that process had it. Were conv no longer paired with that reviewer
// (REVIEW_PLUGIN changed meanwhile), the step is no longer one: a
// review's findings are offered with their buttons, as /review's are.
func (s *sideBySide) resumeLoop(key ConversationKey, conv Conversation, side *sideTurn, pair *pairRecord) {
	if pair == nil {
		return
	}
	if reviewer, _ := s.pairOf(conv); reviewer != pair.Reviewer {
		side.pair = false
		return
	}
	l := &pairLoop{started: conv.Started, reviewer: pair.Reviewer, rounds: pair.Rounds, round: pair.Round, fixing: !side.helps()}
	s.setLoop(key, l, func(*pairLoop) {})
}

// sideBySide is what the router remembers of agents side by side beyond
// the conversations' state: each conversation's last exchange with its
// author (what a review reviews), the findings waiting for a button, and
// the running pair loops. It is safe for concurrent use.
type sideBySide struct {
	// r is the router whose conversations' helpers run their turns.
	r        *Router
	last     *recent.Map[ConversationKey, exchange]
	findings *recent.Map[string, findings]
	mu       sync.Mutex
	loops    map[ConversationKey]*pairLoop
}

func newSideBySide() *sideBySide {
	return &sideBySide{last: recent.New[ConversationKey, exchange](keptExchanges), findings: recent.New[string, findings](keptFindings),
		loops: make(map[ConversationKey]*pairLoop)}
}

// sideMessage is the message of a turn the bot starts in c's
// conversation on its person's behalf: theirs for rights, budgets and
// limits, but never their voice (OriginHelper).
func (c *call) sideMessage(text string) Message {
	m := c.m
	m.ID, m.Text, m.Files, m.Done, m.origin = "", text, nil, nil, OriginHelper
	return m
}

// runSide queues a turn of side with prompt in c's conversation. The
// command's message is done once that turn is (a console reading a
// script waits for it).
func (c *call) runSide(side *sideTurn, prompt string) bool {
	done := c.done
	if done == nil {
		done = func() {}
	}
	m := c.sideMessage(prompt)
	qm := queued{m: m, id: newID(), conv: c.conv, may: c.r.permitsOf(m), done: done, side: side}
	c.tookDone = c.r.enqueue(c.a, qm, BusyQueue)
	return c.tookDone
}

// afterSide follows a turn of t, delivered, that ended with outcome:
// it keeps an author's exchange for a review to read, and moves a review
// or a pair loop on.
func (s *sideBySide) afterSide(a *attached, t *turnRun, outcome string) {
	r := s.r
	qm := t.qm
	if outcome != OutcomeOK {
		if qm.side != nil && qm.side.pair {
			r.side.endLoop(a, qm.m, "")
		}
		return
	}
	if !qm.side.helps() {
		// A turn an earlier process started on a runner (OriginRunner)
		// answers its request too: the review after it shows that one.
		if o := qm.m.origin; o == OriginPerson || o == OriginSchedule || o == OriginRunner {
			request := clipHead(qm.m.Text, maxRequest)
			r.side.last.Set(qm.m.Key, exchange{request: request, reply: t.said.String()})
			r.convs.UpdateStill(qm.m.Key, t.conv, func(c *Conversation) { c.LastRequest = request })
		}
		r.side.pairAfterAuthor(a, t)
		return
	}
	if qm.side.review != nil {
		r.side.reviewed(a, t)
	}
}

// sideStatus is what /status says of c's conversation's helpers and
// pairing.
func (c *call) sideStatus(conv Conversation) string {
	var b strings.Builder
	if len(conv.Helpers) > 0 {
		var hs []string
		for _, h := range conv.Helpers {
			hs = append(hs, fmt.Sprintf("%s (session %s)", c.r.cfg.Plugins.name(h.Plugin), cmp.Or(shortID(h.SessionID), "none yet")))
		}
		b.WriteString("\nHelpers: " + strings.Join(hs, ", "))
	}
	b.WriteString("\n" + c.r.side.pairState(c.m.Key, conv))
	return b.String()
}

// keepHelperSession is keepSession for a helper's turn: its session is
// the helper's, and its spend the conversation's.
func (s *sideBySide) keepHelperSession(m Message, conv Conversation, plugin Plugin, sessionID string, res TurnResult, counted bool) {
	r := s.r
	r.convs.UpdateStill(m.Key, conv, func(c *Conversation) {
		c.keepHelperSession(plugin.ID(), sessionID)
		c.LastUsed = r.clock.Now()
		if counted {
			c.Spent.add(res)
		}
	})
	r.convs.SetOwner(plugin.ID(), sessionID, OwnerOf(m))
}

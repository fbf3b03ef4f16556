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
	"slices"
	"strings"
	"sync"

	"github.com/jake-bot/jake-bot/core/recent"
)

// Helper is one of a conversation's helper agents: a plugin other than
// its author's, and the session it continues.
type Helper struct {
	Plugin    string
	SessionID string
}

// helperSession is the session of conv's helper plugin, or "".
func (c Conversation) helperSession(plugin string) string {
	if i := slices.IndexFunc(c.Helpers, func(h Helper) bool { return h.Plugin == plugin }); i >= 0 {
		return c.Helpers[i].SessionID
	}
	return ""
}

// keepHelperSession sets the session of c's helper plugin, replacing the
// slice (copies of c share the old one).
func (c *Conversation) keepHelperSession(plugin, session string) {
	hs := slices.Clone(c.Helpers)
	if i := slices.IndexFunc(hs, func(h Helper) bool { return h.Plugin == plugin }); i >= 0 {
		hs[i].SessionID = session
	} else {
		hs = append(hs, Helper{Plugin: plugin, SessionID: session})
	}
	c.Helpers = hs
}

// sideTurn is what sets a turn of agents side by side apart from a
// person's own: the agent that runs it, how, and what follows it.
type sideTurn struct {
	// helper is the plugin ID of the helper agent that runs the turn;
	// empty for a turn of the conversation's author (findings to fix).
	helper string
	// readOnly: the turn may read the workdir but change nothing
	// (Turn.ReadOnly).
	readOnly bool
	// label heads the turn's reply, naming the agent and its part.
	label string
	// review, for a review, is what it reviews (core/review.go).
	review *reviewScope
	// pair: the turn is a step of the conversation's pair loop.
	pair bool
}

// helps reports whether s is run by a helper agent rather than the
// conversation's author.
func (s *sideTurn) helps() bool { return s != nil && s.helper != "" }

// pluginOf is the plugin that runs qm's turn in conv.
func (qm queued) pluginOf(conv Conversation) string {
	if qm.side.helps() {
		return qm.side.helper
	}
	return conv.Plugin
}

// sessionOf is the session qm's turn continues in conv: a helper's own,
// else the conversation's.
func (qm queued) sessionOf(conv Conversation) string {
	if qm.side.helps() {
		return conv.helperSession(qm.side.helper)
	}
	return conv.SessionID
}

// applySide makes t the turn qm's side says: a helper's continues the
// helper's own session, with its plugin's own model and mode (the
// conversation's are its author's).
func (qm queued) applySide(t *Turn, conv Conversation) {
	s := qm.side
	if s == nil {
		return
	}
	t.ReadOnly = s.readOnly
	if s.helps() {
		t.SessionID, t.Model, t.Mode = qm.sessionOf(conv), "", ""
	}
}

// sideRecord is a side turn as Turn.Side keeps it, for a later process
// of the bot that follows the turn on its runner (followUnfinished): the
// turn stays its helper's, labelled as it was; a review still records
// what it reviewed; a step of a pair loop goes on with the loop.
type sideRecord struct {
	Helper   string        `json:"helper,omitempty"`
	ReadOnly bool          `json:"read_only,omitempty"`
	Label    string        `json:"label,omitempty"`
	Review   *reviewRecord `json:"review,omitempty"`
	Pair     *pairRecord   `json:"pair,omitempty"`
}

// reviewRecord is a reviewScope as sideRecord keeps it.
type reviewRecord struct {
	Author string   `json:"author"`
	Parts  []string `json:"parts,omitempty"`
}

// pairRecord is the pair loop a step ran in, as it was when it started.
type pairRecord struct {
	Reviewer string `json:"reviewer"`
	Round    int    `json:"round"`
	Rounds   int    `json:"rounds"`
}

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

// readSide is the side turn Turn.Side kept, and the pair loop it was a
// step of; nil for a turn of a person's own, or one recorded by a
// process that kept no side.
func readSide(data json.RawMessage) (*sideTurn, *pairRecord, error) {
	if len(data) == 0 {
		return nil, nil, nil
	}
	var rec sideRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, nil, fmt.Errorf("the turn's side record: %w", err)
	}
	side := &sideTurn{helper: rec.Helper, readOnly: rec.ReadOnly, label: rec.Label, pair: rec.Pair != nil}
	if rec.Review != nil {
		side.review = &reviewScope{author: rec.Review.Author, parts: rec.Review.Parts}
	}
	return side, rec.Pair, nil
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

// The bounds of what sideBySide keeps, in memory: the last exchanges of
// the most recent conversations (a review of one older says it does not
// know the reply) and the most recent findings, each at most maxSaid and
// maxRequest bytes, some 64 MB at most. The request is kept with the
// conversation too (Conversation.LastRequest), in the state saved on
// every change: with NATS_URL one message, of at most 1 MB by default,
// holding every conversation.
const (
	keptExchanges = 2000
	keptFindings  = 1000
	maxSaid       = 16 << 10
	maxRequest    = 4 << 10
)

func newSideBySide() *sideBySide {
	return &sideBySide{last: recent.New[ConversationKey, exchange](keptExchanges), findings: recent.New[string, findings](keptFindings),
		loops: make(map[ConversationKey]*pairLoop)}
}

// exchange is a person's request to the author's agent and its reply.
type exchange struct{ request, reply string }

// clipHead keeps the first n bytes of s, whole characters, marked when
// cut.
func clipHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// saidText is the text a turn's agent said, its last maxSaid bytes. It
// is safe for concurrent use.
type saidText struct {
	mu  sync.Mutex
	b   strings.Builder
	cut bool
}

func (s *saidText) add(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(text)
	if s.b.Len() > 2*maxSaid {
		keep := s.b.String()[s.b.Len()-maxSaid:]
		s.b.Reset()
		s.b.WriteString(keep)
		s.cut = true
	}
}

func (s *saidText) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.b.String()
	if len(t) > maxSaid || s.cut {
		t = "…" + strings.ToValidUTF8(t[len(t)-min(len(t), maxSaid):], "")
	}
	return t
}

// readOnlyMeans says how p keeps a turn from writing, or why it cannot:
// the refusal names the way round it when there is one.
func readOnlyMeans(p Plugin, instead string) (string, error) {
	if rp, ok := p.(ReadOnlyPlugin); ok {
		if means, ok := rp.ReadOnlyMeans(); ok {
			return means, nil
		}
	}
	msg := fmt.Sprintf("%s has no read-only mode here, so it cannot do this without the right to write", p.Name())
	if instead != "" {
		msg += "; " + instead
	}
	return "", Errorf("%s", msg)
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

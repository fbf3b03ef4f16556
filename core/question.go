package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// questions are the pending questions of every conversation: a feature
// of its own, given at construction what it uses (newQuestions) rather
// than the router.
type questions struct {
	chat      chat
	convs     *State
	turns     *conversationTurns
	reactions *reactions
	// timeout is APPROVAL_TIMEOUT; unattended UNATTENDED_APPROVALS.
	timeout    time.Duration
	unattended string
	timers     Clock
	redactor   *Redactor
	clock      Clock
	logger     *slog.Logger
	// deliver outlives the turns: a question is settled after its turn.
	deliver context.Context

	mu      sync.Mutex
	next    int
	pending map[string]*pendingQuestion
}

// chat is what a feature says in a conversation's chat: the router's
// replies and notifications.
type chat interface {
	reply(a *attached, to Target, text string)
	notify(a *attached, m Message, why NotifyReason, text string)
}

func (qs *questions) add(pq *pendingQuestion) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.pending == nil {
		qs.pending = make(map[string]*pendingQuestion)
	}
	qs.next++
	pq.id = "q" + strconv.Itoa(qs.next)
	qs.pending[pq.id] = pq
}

// take removes and returns the question id, or nil when it is no longer
// pending: whoever takes it answers it.
func (qs *questions) take(id string) *pendingQuestion {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	pq := qs.pending[id]
	delete(qs.pending, id)
	return pq
}

// find returns the pending question id, or key's oldest when id is
// empty; nil when there is none. A question found by id may belong to
// another conversation of the same platform: where conversations are per
// user (Telegram topics, Discord channels), a button pressed by someone
// else arrives in that person's conversation, and must be refused, not
// ignored.
func (qs *questions) find(id string, key ConversationKey) *pendingQuestion {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if id == "" {
		id = qs.oldest(key)
	}
	if pq := qs.pending[id]; pq != nil && pq.key.Platform == key.Platform {
		return pq
	}
	return nil
}

func (qs *questions) oldest(key ConversationKey) string {
	best, bestN := "", 0
	for id, pq := range qs.pending {
		n, _ := strconv.Atoi(id[1:])
		if pq.key == key && (best == "" || n < bestN) {
			best, bestN = id, n
		}
	}
	return best
}

// dropAll removes key's pending questions and returns them.
func (qs *questions) dropAll(key ConversationKey) []*pendingQuestion {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	var out []*pendingQuestion
	for id, pq := range qs.pending {
		if pq.key == key {
			out = append(out, pq)
			delete(qs.pending, id)
		}
	}
	return out
}

// ask handles a plugin's question during qm's turn: a tool always allowed
// in the conversation is allowed at once; otherwise the question is shown
// and waits for the author's (or an admin's) answer, or the timeout.
func (qs *questions) ask(a *attached, qm queued, q *Question, idle *idleWatch) {
	if q == nil || q.Answer == nil {
		return
	}
	if conv, ok := qs.convs.Get(qm.m.Key); ok && !q.chooses() && slices.Contains(conv.AllowedTools, q.Tool) {
		q.Answer(Answer{Decision: Allow, By: "always allowed in this conversation"})
		return
	}
	if qm.m.Unattended() && qs.unattended != UnattendedAsk {
		qs.denyUnattended(a, qm.m, q)
		return
	}
	idle.pause()
	pq := &pendingQuestion{key: qm.m.Key, author: qm.m.Author(), authorName: qm.m.AuthorName(), q: q,
		answered: func() { idle.resume(); qs.reactions.react(a, qm.m, ReactionRunning) }}
	qs.add(pq)
	// Shown first, so that even a short timeout's denial follows it.
	qs.showQuestion(a, qm.m, pq)
	qs.chat.notify(a, qm.m, NotifyQuestion, fmt.Sprintf("a question is waiting for your answer: %s", q.Tool))
	qs.reactions.react(a, qm.m, ReactionWaiting)
	timeout := qs.timeout
	// An answer before the timer exists leaves it nothing to take.
	pq.timerMu.Lock()
	defer pq.timerMu.Unlock()
	pq.timer = qs.timers.AfterFunc(timeout, func() {
		if qs.take(pq.id) == nil {
			return // answered meanwhile
		}
		qs.chat.reply(a, qm.m.Target(), fmt.Sprintf("Denied %s: nobody answered within %s.", q.Tool, timeout))
		qs.settleQuestion(a, pq, fmt.Sprintf("⏱ Denied: nobody answered within %s.", timeout))
		pq.answer(Answer{Decision: Deny, Reason: fmt.Sprintf("nobody answered within %s", timeout), By: "timeout"})
	})
	// A script on a pipe reads its next line once the message is done:
	// that line is the answer.
	qm.done()
}

// denyUnattended denies q, raised by the turn of m, which the router sent
// on its author's behalf, at once, and tells the chat.
func (qs *questions) denyUnattended(a *attached, m Message, q *Question) {
	what := q.Tool
	if q.chooses() {
		what = Shorten(q.Summary, 80)
	}
	qs.logger.Info("question of an unattended turn denied", "conversation", m.Key.String(), "tool", q.Tool)
	qs.chat.reply(a, m.Target(), fmt.Sprintf("Denied %s: this turn was sent on %s's behalf while nobody may be watching, and UNATTENDED_APPROVALS=deny answers its questions with no.",
		what, m.AuthorName()))
	q.Answer(Answer{Decision: Deny, Reason: "nobody is watching this scheduled turn: ask again when its author is there", By: "UNATTENDED_APPROVALS"})
}

// showQuestion posts pq with Allow / Always allow / Deny buttons, or as
// text with how to answer where the platform has no buttons.
func (qs *questions) showQuestion(a *attached, m Message, pq *pendingQuestion) {
	q := pq.q
	if q.chooses() {
		qs.showChoiceQuestion(a, m, pq)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "❓ Allow %s?", q.Tool)
	if q.Summary != "" {
		fmt.Fprintf(&b, "\n%s", q.Summary)
	}
	if q.Detail != "" {
		fmt.Fprintf(&b, "\n```\n%s\n```", strings.TrimRight(q.Detail, "\n"))
	}
	fmt.Fprintf(&b, "\nOnly %s or an admin can answer (%s).", m.AuthorName(), pq.id)
	text := qs.redactor.Redact(b.String())
	choices := []Choice{
		{Label: "Allow", Command: "/allow " + pq.id},
		{Label: "Always allow " + q.Tool, Command: "/allow " + pq.id + " always"},
		{Label: "Deny", Command: "/deny " + pq.id},
	}
	qs.postQuestion(a, m, pq, text, choices, "Answer [y]es / [a]lways / [n]o (or say why not).")
}

// postQuestion posts pq's text with buttons for choices, remembering the
// message to edit once answered; without buttons, the text says how to
// answer by typing.
func (qs *questions) postQuestion(a *attached, m Message, pq *pendingQuestion, text string, choices []Choice, typed string) {
	to := m.Target()
	to.Quote = m.ID // addressed to its author (Target.Quote)
	if o, ok := a.p.(ChoiceOfferer); ok {
		if ref, err := o.OfferChoices(qs.deliver, to, text, choices); err == nil {
			qs.mu.Lock()
			pq.shown, pq.text = &ref, text
			settled := pq.settled
			qs.mu.Unlock()
			if settled != "" {
				qs.settleQuestion(a, pq, settled)
			}
			return
		}
	}
	qs.chat.reply(a, to, text+"\n"+typed)
}

// showChoiceQuestion posts a question with options: a button per option,
// or a numbered list to answer by number or in one's own words.
func (qs *questions) showChoiceQuestion(a *attached, m Message, pq *pendingQuestion) {
	q := pq.q
	var b strings.Builder
	fmt.Fprintf(&b, "❓ %s", q.Summary)
	if q.Detail != "" {
		fmt.Fprintf(&b, "\n%s", strings.TrimRight(q.Detail, "\n"))
	}
	var choices []Choice
	for i, o := range q.Options {
		fmt.Fprintf(&b, "\n%d. %s", i+1, o)
		choices = append(choices, Choice{Label: Shorten(o, 40), Command: fmt.Sprintf("/answer %s %d", pq.id, i+1)})
	}
	fmt.Fprintf(&b, "\nOnly %s or an admin can answer (%s).", m.AuthorName(), pq.id)
	text := qs.redactor.Redact(b.String())
	qs.postQuestion(a, m, pq, text, choices, "Answer with a number, or in your own words.")
}

// maxSettleTries bounds the tries to edit an answered question under a
// platform's rate limit.
const maxSettleTries = 30

// settleQuestion edits an answered question's message to say how it was
// answered, which also removes its buttons.
func (qs *questions) settleQuestion(a *attached, pq *pendingQuestion, outcome string) {
	qs.mu.Lock()
	ref, text := pq.shown, pq.text
	if ref == nil {
		pq.settled = outcome
	}
	qs.mu.Unlock()
	if ref == nil {
		return
	}
	pages := a.p.Render([]ResponseBlock{{Kind: BlockText, Text: text + "\n\n" + outcome}})
	if len(pages) == 0 {
		return
	}
	// In the background, waiting out the platform's rate limit: the
	// decision is already in the chat, and the turn must not wait.
	go func() {
		// Each try waits as long as the platform asks; other writes to the
		// channel (the turn's reply, a ping) may take the next slot first.
		for range maxSettleTries {
			err := a.p.Edit(qs.deliver, *ref, pages[0])
			var limited *RateLimitError
			if !errors.As(err, &limited) {
				if err != nil {
					qs.logger.Debug("edit an answered question", "err", err)
				}
				return
			}
			waited := make(chan struct{})
			qs.clock.AfterFunc(limited.RetryAfter, func() { close(waited) })
			select {
			case <-waited:
			case <-qs.deliver.Done():
				return
			}
		}
		qs.logger.Warn("an answered question still shows its buttons: the platform kept refusing the edit", "question", pq.id)
	}()
}

// holdUntilTurnEnds calls done once key's running turn has ended and been
// delivered, or now when none runs.
func (qs *questions) holdUntilTurnEnds(key ConversationKey, done func()) {
	if !qs.turns.hold(key, nil, done) {
		done()
	}
}

// dropQuestions denies the questions left when key's turn ended: their
// CLI is gone.
func (qs *questions) dropQuestions(key ConversationKey) {
	for _, pq := range qs.dropAll(key) {
		pq.answer(Answer{Decision: Deny, Reason: "the turn ended", By: "the turn's end"})
	}
}

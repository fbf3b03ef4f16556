package core

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// questions are the pending questions of every conversation.
type questions struct {
	// r asks in the chat, and settles the questions it answers.
	r       *Router
	mu      sync.Mutex
	next    int
	pending map[string]*pendingQuestion
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
	r := qs.r
	if q == nil || q.Answer == nil {
		return
	}
	if conv, ok := r.convs.Get(qm.m.Key); ok && !q.chooses() && slices.Contains(conv.AllowedTools, q.Tool) {
		q.Answer(Answer{Decision: Allow, By: "always allowed in this conversation"})
		return
	}
	if qm.m.Unattended() && r.cfg.UnattendedApprovals != UnattendedAsk {
		r.questions.denyUnattended(a, qm.m, q)
		return
	}
	idle.pause()
	pq := &pendingQuestion{key: qm.m.Key, author: qm.m.Author(), authorName: qm.m.AuthorName(), q: q,
		answered: func() { idle.resume(); r.reactions.react(a, qm.m, ReactionRunning) }}
	r.questions.add(pq)
	// Shown first, so that even a short timeout's denial follows it.
	r.questions.showQuestion(a, qm.m, pq)
	r.notify(a, qm.m, NotifyQuestion, fmt.Sprintf("a question is waiting for your answer: %s", q.Tool))
	r.reactions.react(a, qm.m, ReactionWaiting)
	timeout := r.cfg.ApprovalTimeout
	// An answer before the timer exists leaves it nothing to take.
	pq.timerMu.Lock()
	defer pq.timerMu.Unlock()
	pq.timer = r.cfg.Timers.AfterFunc(timeout, func() {
		if r.questions.take(pq.id) == nil {
			return // answered meanwhile
		}
		r.reply(a, qm.m.Target(), fmt.Sprintf("Denied %s: nobody answered within %s.", q.Tool, timeout))
		r.questions.settleQuestion(a, pq, fmt.Sprintf("⏱ Denied: nobody answered within %s.", timeout))
		pq.answer(Answer{Decision: Deny, Reason: fmt.Sprintf("nobody answered within %s", timeout), By: "timeout"})
	})
	// A script on a pipe reads its next line once the message is done:
	// that line is the answer.
	qm.done()
}

// denyUnattended denies q, raised by the turn of m, which the router sent
// on its author's behalf, at once, and tells the chat.
func (qs *questions) denyUnattended(a *attached, m Message, q *Question) {
	r := qs.r
	what := q.Tool
	if q.chooses() {
		what = Shorten(q.Summary, 80)
	}
	r.logger.Info("question of an unattended turn denied", "conversation", m.Key.String(), "tool", q.Tool)
	r.reply(a, m.Target(), fmt.Sprintf("Denied %s: this turn was sent on %s's behalf while nobody may be watching, and UNATTENDED_APPROVALS=deny answers its questions with no.",
		what, m.AuthorName()))
	q.Answer(Answer{Decision: Deny, Reason: "nobody is watching this scheduled turn: ask again when its author is there", By: "UNATTENDED_APPROVALS"})
}

// showQuestion posts pq with Allow / Always allow / Deny buttons, or as
// text with how to answer where the platform has no buttons.
func (qs *questions) showQuestion(a *attached, m Message, pq *pendingQuestion) {
	r := qs.r
	q := pq.q
	if q.chooses() {
		r.questions.showChoiceQuestion(a, m, pq)
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
	text := r.cfg.Redactor.Redact(b.String())
	choices := []Choice{
		{Label: "Allow", Command: "/allow " + pq.id},
		{Label: "Always allow " + q.Tool, Command: "/allow " + pq.id + " always"},
		{Label: "Deny", Command: "/deny " + pq.id},
	}
	r.questions.postQuestion(a, m, pq, text, choices, "Answer [y]es / [a]lways / [n]o (or say why not).")
}

// postQuestion posts pq's text with buttons for choices, remembering the
// message to edit once answered; without buttons, the text says how to
// answer by typing.
func (qs *questions) postQuestion(a *attached, m Message, pq *pendingQuestion, text string, choices []Choice, typed string) {
	r := qs.r
	to := m.Target()
	to.Quote = m.ID // addressed to its author (Target.Quote)
	if o, ok := a.p.(ChoiceOfferer); ok {
		if ref, err := o.OfferChoices(r.deliverCtx, to, text, choices); err == nil {
			r.questions.mu.Lock()
			pq.shown, pq.text = &ref, text
			settled := pq.settled
			r.questions.mu.Unlock()
			if settled != "" {
				r.questions.settleQuestion(a, pq, settled)
			}
			return
		}
	}
	r.reply(a, to, text+"\n"+typed)
}

// showChoiceQuestion posts a question with options: a button per option,
// or a numbered list to answer by number or in one's own words.
func (qs *questions) showChoiceQuestion(a *attached, m Message, pq *pendingQuestion) {
	r := qs.r
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
	text := r.cfg.Redactor.Redact(b.String())
	r.questions.postQuestion(a, m, pq, text, choices, "Answer with a number, or in your own words.")
}

// maxSettleTries bounds the tries to edit an answered question under a
// platform's rate limit.
const maxSettleTries = 30

// settleQuestion edits an answered question's message to say how it was
// answered, which also removes its buttons.
func (qs *questions) settleQuestion(a *attached, pq *pendingQuestion, outcome string) {
	r := qs.r
	r.questions.mu.Lock()
	ref, text := pq.shown, pq.text
	if ref == nil {
		pq.settled = outcome
	}
	r.questions.mu.Unlock()
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
			err := a.p.Edit(r.deliverCtx, *ref, pages[0])
			var limited *RateLimitError
			if !errors.As(err, &limited) {
				if err != nil {
					r.logger.Debug("edit an answered question", "err", err)
				}
				return
			}
			waited := make(chan struct{})
			r.clock.AfterFunc(limited.RetryAfter, func() { close(waited) })
			select {
			case <-waited:
			case <-r.deliverCtx.Done():
				return
			}
		}
		r.logger.Warn("an answered question still shows its buttons: the platform kept refusing the edit", "question", pq.id)
	}()
}

// cmdAnswer answers /allow, /deny and /answer.
func cmdAnswer(c *call) (string, error) {
	if !c.answer(answerCommand(c.cmd)) {
		return "", Errorf("no question is waiting for an answer here")
	}
	return "", nil
}

// answer answers a pending question of c's conversation (id, or the
// oldest) with ans, replying with the decision. It reports whether there
// was a question to answer; if so it owns c.done (c.tookDone), which it
// holds until the turn ends so that a script's next line waits for the
// turn the answer let go on.
func (c *call) answer(id string, ans Answer) bool {
	r, a, m := c.r, c.a, c.m
	pq := r.questions.find(id, m.Key)
	if pq == nil {
		return false
	}
	c.tookDone = true
	done := c.done
	by := m.Author()
	if by != pq.author && !c.who.Admin {
		r.reply(a, m.Target(), fmt.Sprintf("Only the author of this turn (%s) or an admin can answer.", pq.authorName))
		done()
		return true
	}
	if r.questions.take(pq.id) == nil {
		r.reply(a, m.Target(), "That question was already answered.")
		done()
		return true
	}
	ans.By = by
	// The chat names who answered as the platform names them.
	name := m.AuthorName()
	if pq.q.chooses() {
		ans = choiceAnswer(pq.q, ans.Choice)
		ans.By = by
		text := fmt.Sprintf("Answered (%s): %s", name, ans.Choice)
		r.reply(a, m.Target(), text)
		r.questions.settleQuestion(a, pq, "→ "+text)
		r.questions.holdUntilTurnEnds(pq.key, done)
		pq.answer(ans)
		return true
	}
	if ans.Reason == "" && ans.Decision == Deny {
		ans.Reason = "denied by " + name
	}
	var text string
	switch ans.Decision {
	case Allow:
		text = fmt.Sprintf("Allowed %s (%s).", pq.q.Tool, name)
	case AllowAlways:
		r.convs.Update(pq.key, func(cv *Conversation) {
			if !slices.Contains(cv.AllowedTools, pq.q.Tool) {
				cv.AllowedTools = append(slices.Clone(cv.AllowedTools), pq.q.Tool)
			}
		})
		text = fmt.Sprintf("Allowed %s, and always from now on in this conversation (%s).", pq.q.Tool, name)
	default:
		text = fmt.Sprintf("Denied %s (%s): %s", pq.q.Tool, name, ans.Reason)
	}
	// The decision is in the chat before the turn goes on.
	r.reply(a, m.Target(), text)
	r.questions.settleQuestion(a, pq, "→ "+text)
	r.questions.holdUntilTurnEnds(pq.key, done)
	pq.answer(ans)
	return true
}

// holdUntilTurnEnds calls done once key's running turn has ended and been
// delivered, or now when none runs.
func (qs *questions) holdUntilTurnEnds(key ConversationKey, done func()) {
	r := qs.r
	if !r.turns.hold(key, nil, done) {
		done()
	}
}

// dropQuestions denies the questions left when key's turn ended: their
// CLI is gone.
func (qs *questions) dropQuestions(key ConversationKey) {
	r := qs.r
	for _, pq := range r.questions.dropAll(key) {
		pq.answer(Answer{Decision: Deny, Reason: "the turn ended", By: "the turn's end"})
	}
}

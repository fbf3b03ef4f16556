package core

import (
	"fmt"
	"slices"
)

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

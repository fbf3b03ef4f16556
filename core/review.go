package core

import (
	"fmt"
	"slices"
	"strings"
)

// reviewRequest is the prompt of a review by reviewer of what conv's
// author changed since the last review, and what it covers; nothing
// (empty prompt) when nothing changed since.
func (c *call) reviewRequest(conv Conversation, reviewer Plugin) (prompt string, scope *reviewScope, err error) {
	ch, err := c.changes(c.ctx, conv)
	if err != nil {
		return "", nil, err
	}
	scope = &reviewScope{author: conv.Plugin}
	var diff strings.Builder
	for _, p := range diffParts(ch.Patch, ch.Stat) {
		scope.parts = append(scope.parts, p.hash)
		if !slices.Contains(conv.Reviewed, p.hash) {
			diff.WriteString(p.text)
			if !strings.HasSuffix(p.text, "\n") {
				diff.WriteString("\n")
			}
		}
	}
	if diff.Len() == 0 {
		return "", nil, nil
	}
	patch := diff.String()
	if ch.Cut() || len(patch) > maxReviewPatch {
		patch = patch[:strings.LastIndexByte(patch[:min(len(patch), maxReviewPatch)], '\n')+1] +
			"(the diff goes on: run git diff to read the rest)\n"
	}
	// The request outlives a restart, with the conversation; its reply
	// is kept in memory only. Both are read now, as the turn before may
	// have ended since conv was read (they are kept once its reply is
	// delivered).
	request := conv.LastRequest
	if now, ok := c.r.convs.Still(c.m.Key, conv); ok {
		request = now.LastRequest
	}
	last, ok := c.r.side.last.Get(c.m.Key)
	switch {
	case request == "":
		last = exchange{request: "(not known)", reply: "(not known)"}
	case !ok || last.request != request:
		last = exchange{request: request, reply: "(not known: the bot restarted since)"}
	}
	author := c.r.cfg.Plugins.name(conv.Plugin)
	return fmt.Sprintf(reviewPrompt, author, last.request, last.reply, ch.Since, "```diff\n"+patch+"```"), scope, nil
}

// reviewer is the plugin that reviews c's conversation: id, or, when id
// is empty, its pairing's reviewer or else the first configured plugin
// other than the conversation's that can be read-only.
func (c *call) reviewer(id string) (Plugin, error) {
	r, conv := c.r, c.conv
	if id == "" {
		if rev, _ := r.side.pairOf(conv); rev != "" {
			id = rev
		}
	}
	if id != "" {
		p, err := c.helperPlugin(id)
		if err != nil {
			return nil, err
		}
		if _, err := readOnlyMeans(p, "a review never runs with the right to write; /ask "+id+" --write … may"); err != nil {
			return nil, err
		}
		return p, nil
	}
	for _, pid := range r.cfg.Plugins.IDs() {
		if pid == conv.Plugin {
			continue
		}
		if p, err := c.helperPlugin(pid); err == nil {
			if _, err := readOnlyMeans(p, ""); err == nil {
				return p, nil
			}
		}
	}
	return nil, Errorf("no other plugin here can review read-only: /review needs one besides %s", r.cfg.Plugins.name(conv.Plugin))
}

// cmdReview answers /review [plugin]: another agent reviews, read-only,
// what the conversation's author changed since the last review.
func cmdReview(c *call) (string, error) {
	p, err := c.reviewer(strings.ToLower(c.cmd.Arg))
	if err != nil {
		return "", err
	}
	return c.review(p, false)
}

// review queues a review by p of c's conversation; pair makes it a step
// of the pair loop. It says when there is nothing to review.
func (c *call) review(p Plugin, pair bool) (string, error) {
	prompt, scope, err := c.reviewRequest(c.conv, p)
	if err != nil {
		return "", err
	}
	if prompt == "" {
		return "Nothing to review: no change since the last review (/diff shows them all).", nil
	}
	label := fmt.Sprintf("🔎 %s (reviewing %s's work):", p.Name(), c.r.cfg.Plugins.name(c.conv.Plugin))
	if pair {
		label = fmt.Sprintf("🔎 %s (reviewing %s's work, %s):", p.Name(), c.r.cfg.Plugins.name(c.conv.Plugin), c.r.side.roundOf(c.m.Key))
	}
	if !c.runSide(&sideTurn{helper: p.ID(), readOnly: true, label: label, review: scope, pair: pair}, prompt) && pair {
		c.r.side.stopLoop(c.m.Key)
	}
	return "", nil
}

// reviewed follows review turn t, done: the conversation remembers what
// was reviewed, and its verdict moves the pair loop on or offers the
// findings to the author.
func (s *sideBySide) reviewed(a *attached, t *turnRun) {
	r := s.r
	qm := t.qm
	side := qm.side
	r.convs.UpdateStill(qm.m.Key, qm.conv, func(c *Conversation) {
		c.Reviewed = side.review.parts
	})
	text := t.said.String()
	v := parseVerdict(text)
	f := findings{key: qm.m.Key, started: qm.conv.Started, author: side.review.author, reviewer: side.helper, text: text}
	if side.pair {
		r.side.pairAfterReview(a, qm.m, f, v)
		return
	}
	if v == approved {
		r.reply(a, qm.m.Target(), fmt.Sprintf("✅ %s approves %s's change.", r.cfg.Plugins.name(f.reviewer), r.cfg.Plugins.name(f.author)))
		return
	}
	r.side.offerFindings(a, qm.m.Target(), f, v, "")
}

// offerFindings posts a review's verdict with its buttons: Fix with the
// author (the findings become its next turn) and Dismiss.
func (s *sideBySide) offerFindings(a *attached, to Target, f findings, v verdict, why string) {
	r := s.r
	id := newID()[:8]
	r.side.findings.Set(id, f)
	author, reviewer := r.cfg.Plugins.name(f.author), r.cfg.Plugins.name(f.reviewer)
	text := fmt.Sprintf("🔎 %s asks for changes.", reviewer)
	if v == noVerdict {
		text = fmt.Sprintf("🔎 %s gave no verdict (its last line is neither %s nor %s), so its review counts as asking for changes.", reviewer, verdictApprove, verdictChanges)
	}
	if why != "" {
		text += " " + why
	}
	r.offer(a, to, text, []Choice{{Label: "Fix with " + author, Command: "/review fix " + id}, {Label: "Dismiss", Command: "/review dismiss " + id}},
		fmt.Sprintf("/review fix %s sends the findings to %s as its next turn; /review dismiss %s drops them.", id, author, id))
}

// takeFindings takes the findings id waiting in c's conversation.
func (c *call) takeFindings(id string) (findings, error) {
	f, ok := c.r.side.findings.Get(id)
	if !ok || f.key != c.m.Key || !f.started.Equal(c.conv.Started) || f.author != c.conv.Plugin {
		return findings{}, Errorf("those findings no longer wait: they were used or dismissed, or the conversation changed since")
	}
	c.r.side.findings.Delete(id)
	return f, nil
}

// cmdReviewFix answers the button Fix with <author>: the findings become
// the author's next turn, the bot's on the person's behalf.
func cmdReviewFix(c *call) (string, error) {
	f, err := c.takeFindings(c.cmd.Arg)
	if err != nil {
		return "", err
	}
	c.fix(f, "")
	return "", nil
}

// fix queues the author's turn that fixes findings f; round names the
// pair loop's round, for a step of it.
func (c *call) fix(f findings, round string) {
	r := c.r
	author, reviewer := r.cfg.Plugins.name(f.author), r.cfg.Plugins.name(f.reviewer)
	label := fmt.Sprintf("🔧 %s (fixing %s's findings):", author, reviewer)
	if round != "" {
		label = fmt.Sprintf("🔧 %s (fixing %s's findings, %s):", author, reviewer, round)
	}
	if !c.runSide(&sideTurn{label: label, pair: round != ""}, fmt.Sprintf(fixPrompt, reviewer, f.text)) && round != "" {
		r.side.stopLoop(c.m.Key)
	}
}

// cmdReviewDismiss answers the button Dismiss.
func cmdReviewDismiss(c *call) (string, error) {
	if _, err := c.takeFindings(c.cmd.Arg); err != nil {
		return "", err
	}
	return "Findings dismissed.", nil
}

package core

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PairOff is Conversation.Pair for a conversation /pair off unpaired,
// whatever REVIEW_PLUGIN says.
const PairOff = "off"

// maxReviewRounds bounds /pair's rounds: each is two turns.
const maxReviewRounds = 10

// pairLoop is a running pair loop: after an author's turn that changed
// files the reviewer reviews; its findings go back to the author, whose
// turn is reviewed again, until the reviewer approves or the rounds are
// spent. A round is one review.
type pairLoop struct {
	// started is the conversation's Started: a loop of one it replaced
	// is over.
	started  time.Time
	reviewer string
	rounds   int
	round    int
	// fixing: the author's turn runs; else the reviewer's.
	fixing bool
}

// pairOf is conv's reviewer and rounds: /pair's, or the bot's
// REVIEW_PLUGIN's; no reviewer when unpaired, or paired with its own
// plugin.
func (s *sideBySide) pairOf(conv Conversation) (reviewer string, rounds int) {
	r := s.r
	reviewer, rounds = conv.Pair, conv.PairRounds
	if reviewer == "" {
		reviewer = r.cfg.ReviewPlugin
	}
	if rounds <= 0 {
		rounds = r.cfg.ReviewRounds
	}
	if reviewer == PairOff || reviewer == conv.Plugin {
		return "", 0
	}
	return reviewer, rounds
}

// loop returns key's pair loop, a copy, if one runs.
func (s *sideBySide) loop(key ConversationKey) (pairLoop, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.loops[key]
	if !ok {
		return pairLoop{}, false
	}
	return *l, true
}

// setLoop applies f to key's pair loop, making one if new is set, and
// returns it; ok is false when none runs (nor was made).
func (s *sideBySide) setLoop(key ConversationKey, new *pairLoop, f func(*pairLoop)) (pairLoop, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.loops[key]
	if !ok && new == nil {
		return pairLoop{}, false
	}
	if !ok {
		l = new
		s.loops[key] = l
	}
	f(l)
	return *l, true
}

// stopLoop ends key's pair loop and reports whether one ran.
func (s *sideBySide) stopLoop(key ConversationKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.loops[key]
	delete(s.loops, key)
	return ok
}

// roundOf names the round of key's pair loop: "round 1 of 2".
func (s *sideBySide) roundOf(key ConversationKey) string {
	r := s.r
	l, _ := r.side.loop(key)
	return fmt.Sprintf("round %d of %d", l.round, l.rounds)
}

// endLoop ends m's conversation's pair loop, saying why when why is set.
func (s *sideBySide) endLoop(a *attached, m Message, why string) {
	r := s.r
	if r.side.stopLoop(m.Key) && why != "" {
		r.reply(a, m.Target(), why)
	}
}

// pairAfterAuthor follows an author's turn t that ended well: when the
// conversation is paired and the turn changed files since the last
// review, the reviewer reviews them, as the next round of a loop the
// turn was a step of, or the first of a new one.
func (s *sideBySide) pairAfterAuthor(a *attached, t *turnRun) {
	r := s.r
	m := t.qm.m
	conv, ok := r.convs.Still(m.Key, t.qm.conv)
	if !ok {
		return
	}
	reviewerID, rounds := r.side.pairOf(conv)
	if reviewerID == "" {
		r.side.stopLoop(m.Key)
		return
	}
	step := t.qm.side != nil && t.qm.side.pair
	l, running := r.side.loop(m.Key)
	if running && !l.started.Equal(conv.Started) {
		r.side.stopLoop(m.Key)
		running = false
	}
	if running != step {
		// A step of a loop /stop ended, or a person's turn in the middle
		// of a loop, whose changes the loop's next review sees.
		return
	}
	c := r.newCall(r.turnCtx, a, m, newID(), nil)
	// Why pairing cannot review is said once per conversation: a
	// workdir outside git would say it after every turn.
	cannot := func(err error) {
		r.side.endLoop(a, m, "")
		if !IsUserError(err) {
			r.logger.Warn("pairing cannot review", "id", c.id, "conversation", m.Key.String(), "err", err)
		}
		if r.saidOnce.Add("pair "+m.Key.String()+" "+UserMessage(err), struct{}{}) {
			r.reply(a, m.Target(), "Pairing cannot review: "+errorText(err, c.id))
		}
	}
	p, err := c.reviewer(reviewerID)
	if err != nil {
		cannot(err)
		return
	}
	fresh := &pairLoop{started: conv.Started, reviewer: p.ID(), rounds: rounds}
	r.side.setLoop(m.Key, fresh, func(l *pairLoop) { l.round++; l.fixing = false })
	text, err := c.review(p, true)
	switch {
	case err != nil:
		cannot(err)
	case text != "":
		// Nothing changed since the last review: nothing to pair on.
		r.side.stopLoop(m.Key)
	}
}

// pairAfterReview follows a review of the pair loop: an approval ends
// it; findings go back to the author while rounds are left, and are
// offered with their buttons once they are spent.
func (s *sideBySide) pairAfterReview(a *attached, m Message, f findings, v verdict) {
	r := s.r
	l, ok := r.side.loop(m.Key)
	if !ok {
		return // /stop ended it
	}
	reviewer, author := r.cfg.Plugins.name(f.reviewer), r.cfg.Plugins.name(f.author)
	switch {
	case v == approved:
		r.side.endLoop(a, m, fmt.Sprintf("✅ %s approves %s's change (round %d of %d). Pairing resumes at the next turn that changes files.", reviewer, author, l.round, l.rounds))
	case l.round >= l.rounds:
		r.side.stopLoop(m.Key)
		r.side.offerFindings(a, m.Target(), f, v, fmt.Sprintf("Pairing stops: %s spent.", plural(l.rounds, "round")))
	default:
		r.side.setLoop(m.Key, nil, func(l *pairLoop) { l.fixing = true })
		r.newCall(r.turnCtx, a, m, newID(), nil).fix(f, r.side.roundOf(m.Key))
	}
}

// cmdPair answers /pair [plugin [rounds] | off]: it shows, sets or ends
// the conversation's pairing.
func cmdPair(c *call) (string, error) {
	r := c.r
	arg, rest := cutWord(strings.ToLower(c.cmd.Arg))
	switch arg {
	case "":
		return r.side.pairState(c.m.Key, c.conv), nil
	case PairOff:
		r.convs.Update(c.m.Key, func(conv *Conversation) { conv.Pair, conv.PairRounds = PairOff, 0 })
		if r.side.stopLoop(c.m.Key) {
			return "Pairing is off; the running loop stops after its running turn.", nil
		}
		return "Pairing is off.", nil
	}
	p, err := c.reviewer(arg)
	if err != nil {
		return "", err
	}
	rounds := r.cfg.ReviewRounds
	if rest != "" {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 || n > maxReviewRounds {
			return "", Errorf("rounds must be a number from 1 to %d, not %q", maxReviewRounds, rest)
		}
		rounds = n
	}
	r.convs.Update(c.m.Key, func(conv *Conversation) { conv.Pair, conv.PairRounds = p.ID(), rounds })
	means, _ := readOnlyMeans(p, "")
	return fmt.Sprintf("Pairing with %s: after each %s turn that changes files, %s reviews it (read-only: %s), and its findings go back to %s, for up to %d rounds. /pair off ends it.",
		p.Name(), r.cfg.Plugins.name(c.conv.Plugin), p.Name(), means, r.cfg.Plugins.name(c.conv.Plugin), rounds), nil
}

// pairState says where key's pairing is, for /status and /pair.
func (s *sideBySide) pairState(key ConversationKey, conv Conversation) string {
	r := s.r
	reviewer, rounds := r.side.pairOf(conv)
	if reviewer == "" {
		return "Pairing: off (/pair <plugin> [rounds] pairs another agent as reviewer)"
	}
	name := r.cfg.Plugins.name(reviewer)
	l, ok := r.side.loop(key)
	if !ok {
		return fmt.Sprintf("Pairing with %s: up to %d rounds after each %s turn that changes files", name, rounds, r.cfg.Plugins.name(conv.Plugin))
	}
	who := name + " reviewing"
	if l.fixing {
		who = r.cfg.Plugins.name(conv.Plugin) + " fixing"
	}
	return fmt.Sprintf("Pairing with %s: round %d of %d, %s", name, l.round, l.rounds, who)
}

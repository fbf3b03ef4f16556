package core

// permits is what one message may do by who made it, decided in this one
// place (Router.permitsOf) as the message arrives and carried with it (its
// call's may, its queued's may), so that no later step asks again. Each
// error is nil where the message may, else why not in words for the chat:
//
//   - command: a person's own message, or a schedule a person set (their
//     own words, "as if they typed it"); never the agent's;
//   - answer: only a person's own message or button press, made with the
//     question or the turn in front of them;
//   - bypass: a mode that skips approvals, for admins (or everyone with
//     ALLOW_BYPASS_MODES), never for a turn the agent caused, nor one of
//     another agent of the conversation (OriginHelper: an /ask, a
//     review, findings to fix);
//   - a steer (steerInto): as an answer, and only into a turn of the same
//     author, or of one whose turn would be exactly the same.
type permits struct {
	origin                  Origin
	command, answer, bypass error
	// admin and ownBudget (a daily budget of the author's own bounds
	// their turns) are what a turn of the message runs with besides its
	// mode, for steerInto.
	admin, ownBudget bool
}

// sameTurn reports whether a turn of p's message in its conversation
// would run exactly as one of into's, of another author: the same roots
// and plugins (admin or not), the same mode and approvals (bypass), and
// no daily budget of its own that would bound it otherwise.
func (p permits) sameTurn(into permits) bool {
	return p.admin == into.admin && (p.bypass == nil) == (into.bypass == nil) && !p.ownBudget && !into.ownBudget
}

package core

import "fmt"

// OriginKind is who or what made a message: a person, or the bot on
// someone's behalf. Only core sets a kind other than OriginPerson (the
// field is unexported), so no adapter, plugin nor message text can make a
// message pass for another kind.
type OriginKind uint8

const (
	// OriginPerson: a person wrote it or pressed a button, as a platform
	// reported it. The zero value: every message an adapter makes.
	OriginPerson OriginKind = iota
	// OriginSchedule: a schedule a person set (/at, /every) sent it.
	OriginSchedule
	// OriginAgent: the agent of a turn, through one of the bot's tools
	// (its schedule tool), in its turn's conversation.
	OriginAgent
	// OriginAgentSchedule: a schedule the agent of a turn set sent it.
	OriginAgentSchedule
	// OriginContinuation: a turn a usage window refused, sent again at
	// the window's reset.
	OriginContinuation
	// OriginRunner: a turn an earlier process of the bot left running on
	// a runner, followed again.
	OriginRunner
	// OriginHelper: another agent of the conversation (/ask, /review,
	// /pair): a turn the bot starts on the person's behalf for a helper
	// agent, or a reviewer's findings sent to the author's agent.
	OriginHelper
)

func (k OriginKind) String() string {
	switch k {
	case OriginPerson:
		return "person"
	case OriginSchedule:
		return "schedule"
	case OriginAgent:
		return "agent"
	case OriginAgentSchedule:
		return "agent schedule"
	case OriginContinuation:
		return "continuation"
	case OriginRunner:
		return "runner"
	case OriginHelper:
		return "helper agent"
	}
	return fmt.Sprintf("origin %d", k)
}

// Origin is who made a message: its kind, and the person it acts for,
// whose rights bound it (its author).
type Origin struct {
	Kind OriginKind
	User string
}

// Origin returns who made m.
func (m Message) Origin() Origin { return Origin{Kind: m.origin, User: m.Author()} }

// Unattended reports whether m was sent on its author's behalf (a
// schedule, a continuation at a window's reset): nobody may be watching
// its turn (RouterConfig.UnattendedApprovals).
func (m Message) Unattended() bool {
	switch m.origin {
	case OriginSchedule, OriginAgentSchedule, OriginContinuation:
		return true
	}
	return false
}

// An act is what a message asks of the router, beyond a turn of its own,
// which every message may have.
type act uint8

const (
	// actCommand: run a slash command.
	actCommand act = iota + 1
	// actAnswer: answer a question of a running turn, or press a
	// button that moves a waiting message into it.
	actAnswer
	// actSteer: be added to a running turn, with its rights.
	actSteer
	// actBypass: choose, or run in, a mode in which tools run with
	// nobody approving them.
	actBypass
)

// permit decides, in this one place, what m may do by who made it; it
// returns nil, or why not in words for the chat:
//
//   - a command: a person's own message, or a schedule a person set
//     (their own words, "as if they typed it"); never the agent's;
//   - an answer or a steer: only a person's own message or button press,
//     made with the question or the turn in front of them;
//   - a steer, further: only into a turn of the same author, or of one
//     whose turn would be exactly the same (sameTurn);
//   - a bypass mode: admins (or everyone with ALLOW_BYPASS_MODES), never
//     for a turn the agent caused, nor one of another agent of the
//     conversation (OriginHelper: an /ask, a review, findings to fix).
//
// into is the running turn's message, for actSteer.
func (r *Router) permit(m Message, what act, into *Message) error {
	o := m.Origin()
	switch what {
	case actCommand:
		if o.Kind != OriginPerson && o.Kind != OriginSchedule {
			return Errorf("a message sent by a %s is never a command", o.Kind)
		}
	case actAnswer:
		if o.Kind != OriginPerson {
			return Errorf("only a person's own message or button press acts on a running turn, not a %s's", o.Kind)
		}
	case actSteer:
		switch {
		case o.Kind != OriginPerson:
			return Errorf("a message sent by a %s starts a turn of its own", o.Kind)
		case into == nil:
			return Errorf("no turn is running")
		case into.Author() == m.Author():
			return nil
		case !r.sameTurn(m, *into):
			return Errorf("the running turn is %s's, and yours would not run the same (mode, approvals, workdirs or budget)", into.AuthorName())
		}
	case actBypass:
		switch {
		case o.Kind == OriginAgent || o.Kind == OriginAgentSchedule:
			return Errorf("a turn the agent set runs no mode that skips approvals")
		case o.Kind == OriginHelper:
			return Errorf("a turn another agent of the conversation caused runs no mode that skips approvals")
		case !r.cfg.AllowBypassModes && !r.cfg.Access.RightsOf(m).Admin:
			return Errorf("only admins may use a mode that skips approvals")
		}
	}
	return nil
}

// sameTurn reports whether a turn of m in its conversation would run
// exactly as one of into's, of another author: the same roots and
// plugins (admin or not), the same mode and approvals (permit of
// actBypass), and no daily budget of its own that would bound it
// otherwise.
func (r *Router) sameTurn(m, into Message) bool {
	if r.cfg.Access.RightsOf(m).Admin != r.cfg.Access.RightsOf(into).Admin {
		return false
	}
	if (r.permit(m, actBypass, nil) == nil) != (r.permit(into, actBypass, nil) == nil) {
		return false
	}
	b := r.cfg.Budgets
	perUser := b.UserDailyUSD > 0 || b.UserDailyTokens > 0
	return !perUser || (!r.holds.budgeted(m) && !r.holds.budgeted(into))
}

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

// permitsOf decides what m may do.
func (r *Router) permitsOf(m Message) permits {
	o := m.Origin()
	admin := r.cfg.Access.RightsOf(m).Admin
	b := r.cfg.Budgets
	p := permits{origin: o, admin: admin, ownBudget: (b.UserDailyUSD > 0 || b.UserDailyTokens > 0) && (b.Admins || !admin)}
	if o.Kind != OriginPerson && o.Kind != OriginSchedule {
		p.command = Errorf("a message sent by a %s is never a command", o.Kind)
	}
	if o.Kind != OriginPerson {
		p.answer = Errorf("only a person's own message or button press acts on a running turn, not a %s's", o.Kind)
	}
	switch {
	case o.Kind == OriginAgent || o.Kind == OriginAgentSchedule:
		p.bypass = Errorf("a turn the agent set runs no mode that skips approvals")
	case o.Kind == OriginHelper:
		p.bypass = Errorf("a turn another agent of the conversation caused runs no mode that skips approvals")
	case !r.cfg.AllowBypassModes && !admin:
		p.bypass = Errorf("only admins may use a mode that skips approvals")
	}
	return p
}

// steerInto returns nil if p's message may be added to the running turn
// of into (nil: none runs), else why not.
func (p permits) steerInto(into *queued) error {
	switch {
	case p.origin.Kind != OriginPerson:
		return Errorf("a message sent by a %s starts a turn of its own", p.origin.Kind)
	case into == nil:
		return Errorf("no turn is running")
	case into.may.origin.User == p.origin.User:
		return nil
	case !p.sameTurn(into.may):
		return Errorf("the running turn is %s's, and yours would not run the same (mode, approvals, workdirs or budget)", into.m.AuthorName())
	}
	return nil
}

// sameTurn reports whether a turn of p's message in its conversation
// would run exactly as one of into's, of another author: the same roots
// and plugins (admin or not), the same mode and approvals (bypass), and
// no daily budget of its own that would bound it otherwise.
func (p permits) sameTurn(into permits) bool {
	return p.admin == into.admin && (p.bypass == nil) == (into.bypass == nil) && !p.ownBudget && !into.ownBudget
}

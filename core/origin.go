package core

import (
	"fmt"
)

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

package core

import "time"

// BlockKind says what a ResponseBlock holds, so that each platform's
// formatter can render it in its own way.
type BlockKind int

const (
	// BlockText is markdown prose from the model.
	BlockText BlockKind = iota
	// BlockCode is a code listing; Language may name its language.
	BlockCode
	// BlockDiff is a change to files; Path and Action describe it.
	BlockDiff
	// BlockToolUse is one tool invocation shown as a compact status line.
	BlockToolUse
	// BlockError is an error the user must see.
	BlockError
	// BlockWarning is a problem that did not end the turn.
	BlockWarning
	// BlockStatus is a short note such as "thinking" or a reasoning summary.
	BlockStatus
	// BlockFooter ends a turn with its duration and cost.
	BlockFooter
	// BlockPlan is the agent's task list as a checklist (PlanBlock): one
	// per reply, replaced as the agent updates it.
	BlockPlan
)

var blockKindNames = [...]string{"text", "code", "diff", "tool", "error", "warning", "status", "footer", "plan"}

func (k BlockKind) String() string {
	if int(k) < len(blockKindNames) {
		return blockKindNames[k]
	}
	return "unknown"
}

// ToolStatus is the state of a tool invocation.
type ToolStatus string

const (
	ToolRunning ToolStatus = "running"
	ToolDone    ToolStatus = "done"
	ToolFailed  ToolStatus = "failed"
)

// ResponseBlock is one normalised piece of a CLI's answer. Fields other than
// Kind and Text are used by the kinds that need them.
type ResponseBlock struct {
	Kind BlockKind
	Text string
	// ID lets a later block replace an earlier one with the same ID, so a
	// tool line can move from running to done.
	ID string
	// Language is a code block's language hint.
	Language string
	// Tool is a tool's display name (already cleaned by the plugin); Text
	// then holds a short argument and Detail a short result.
	Tool   string
	Status ToolStatus
	Detail string
	// Path and Action describe a diff: the file and add, update or delete.
	Path   string
	Action string
	// Footer fields: the turn's duration, and its cost in dollars where
	// the CLI reports it, in tokens always.
	Duration     time.Duration
	CostUSD      float64
	InputTokens  int
	OutputTokens int
	// ContextPercent is how full the model's context window is, where the
	// CLI says (TurnResult.ContextPercent); -1 or 0 shows nothing.
	ContextPercent int
}

// ContextCrowded is the fill of the context window, in percent, above
// which a footer suggests compacting it.
const ContextCrowded = 85

package core

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// EventKind says what a plugin Event carries.
type EventKind int

const (
	// EventText appends Text to the answer (a streamed delta).
	EventText EventKind = iota
	// EventBlock adds Block, or replaces the block with the same ID.
	EventBlock
	// EventSession reports the session id (and model) as soon as the CLI
	// announces it, so a turn cut short can still be resumed.
	EventSession
	// EventQuestion asks the chat before a tool runs; Question holds it.
	// Plugins emit it only when Turn.Ask is set.
	EventQuestion
	// EventLimit reports a usage window of the CLI's subscription; Limit
	// holds it. The router keeps it (/limits) and warns of it in the
	// footer; it is not part of the reply.
	EventLimit
	// EventBackground reports the CLI's background work (Background):
	// the router shows it, lists it in /status and keeps the turn open
	// while it runs.
	EventBackground
)

// Event is what a Plugin emits while a turn runs.
type Event struct {
	Kind       EventKind
	Text       string
	Block      ResponseBlock
	SessionID  string
	Model      string
	Question   *Question
	Limit      *UsageWindow
	Background *Background
}

// TurnResult is a turn's outcome as the CLI reported it.
type TurnResult struct {
	// SessionID is the session the turn ran in, for the next turn's
	// resume. (ResumeToken on the runners' wire, as before.)
	SessionID string `json:"ResumeToken"`
	// IsError is true when the CLI reported a failed turn. The plugin has
	// already emitted an error block saying why.
	IsError  bool
	Duration time.Duration
	CostUSD  float64
	// InputTokens and OutputTokens are as the CLI reported them; 0 when not.
	InputTokens  int
	OutputTokens int
	// ContextTokens is how much of the model's context window
	// (ContextWindow) the conversation fills after the turn, where the CLI
	// reports both; 0 when not.
	ContextTokens int
	ContextWindow int
}

// ContextPercent is how full the context window is, in whole percent, or
// -1 when the CLI did not say.
func (r TurnResult) ContextPercent() int {
	if r.ContextWindow <= 0 || r.ContextTokens <= 0 {
		return -1
	}
	return min(100, r.ContextTokens*100/r.ContextWindow)
}

// TextEvent returns an EventText event.
func TextEvent(s string) Event { return Event{Kind: EventText, Text: s} }

// BlockEvent returns an EventBlock event.
func BlockEvent(b ResponseBlock) Event { return Event{Kind: EventBlock, Block: b} }

// ErrorEvent returns an EventBlock event with an error block.
func ErrorEvent(msg string) Event {
	return Event{Kind: EventBlock, Block: ResponseBlock{Kind: BlockError, Text: msg}}
}

// Decision is how the chat answered a question.
type Decision int

const (
	Deny Decision = iota
	Allow
	// AllowAlways allows this call and, for the rest of the
	// conversation, every call of the same tool.
	AllowAlways
)

// Answer is the chat's answer to a Question.
type Answer struct {
	Decision Decision
	// Reason, for a denial, is told to the agent.
	Reason string
	// Choice is the option picked, or the words typed, for a question
	// with Options.
	Choice string
	// By is who answered, for the chat and the logs.
	By string
}

// Question is a plugin asking the chat before its CLI runs a tool.
type Question struct {
	// Tool is the tool's display name ("Bash", "Edit"): "always allow"
	// is remembered by it.
	Tool string
	// Summary is one line saying what the call does (the command, the
	// file); Detail is more, such as a short diff.
	Summary string
	Detail  string
	// Options, when set, make this a question with answers to pick (the
	// agent's own question, or a plan to approve) instead of allow or
	// deny: the answer's Choice is the option picked, or the person's
	// own words.
	Options []string
	// Open, for a question without Options (the agent's ask_user), takes
	// the person's own words instead of allow or deny.
	Open bool
	// Answer receives the answer, exactly once. It must not block.
	Answer func(Answer)
}

// Background is the CLI's background work as a plugin reports it
// (EventBackground): commands and agents the agent started to run on
// while it answers, which its CLI reports on when they end, re-invoking
// the model (Claude Code's run_in_background).
type Background struct {
	// Tasks are what runs now, described; none once all have ended.
	Tasks []string
	// Answered says the turn's own answer is complete: only the work
	// keeps it open, for at most RouterConfig.BackgroundLimit.
	Answered bool
}

// DefaultBackgroundLimit is how long a turn stays open after its answer
// for its background work when RouterConfig.BackgroundLimit is zero.
const DefaultBackgroundLimit = 30 * time.Minute

// ErrBackgroundLimit ends a turn whose background work ran past
// RouterConfig.BackgroundLimit after its answer.
var ErrBackgroundLimit = errors.New("background work ran past BACKGROUND_LIMIT")

// Summary is the work for /status and the reply: "1 task — Slow
// background job".
func (b Background) Summary() string {
	n := len(b.Tasks)
	noun := "tasks"
	if n == 1 {
		noun = "task"
	}
	return fmt.Sprintf("%d %s — %s", n, noun, Shorten(oneLine(strings.Join(b.Tasks, ", ")), 200))
}

// UsageWindow is one usage window of a CLI's subscription (Claude's five
// hours, Codex's week) as the CLI last reported it. A plugin emits it in
// an EventLimit with Window, UsedPercent, ResetsAt and Rejected; the
// router fills in Plugin and Runner.
type UsageWindow struct {
	Plugin string `json:"plugin,omitempty"`
	// Runner is the runner the turn ran on; empty for this machine.
	Runner string `json:"runner,omitempty"`
	// Window names it as the chat shows it: "5h", "weekly".
	Window string `json:"window"`
	// UsedPercent is how much of it is used, 0 to 100; -1 when the CLI
	// did not say.
	UsedPercent int       `json:"used_percent"`
	ResetsAt    time.Time `json:"resets_at"`
	// Rejected is set when the window refused a turn.
	Rejected bool `json:"rejected,omitempty"`
}

package core

import (
	"log/slog"
	"time"
)

// RouterConfig holds the router's settings.
type RouterConfig struct {
	Plugins *Registry
	Access  *Access
	Roots   Roots
	// DefaultWorkdir is where /start without a path begins; empty means
	// the first root.
	DefaultWorkdir string
	// TurnTimeout bounds one turn; zero means 30 minutes.
	TurnTimeout time.Duration
	// IdleTimeout stops a turn whose plugin emitted no event for that
	// long; zero means 10 minutes, negative means never. Like TurnTimeout
	// it runs on real time, not on Clock.
	IdleTimeout time.Duration
	// QueueLimit is how many messages may wait behind a running turn;
	// zero means 5.
	QueueLimit int
	// MaxRunningTurns bounds the turns running at once in the whole bot,
	// and MaxUserTurns those of one user; zero means no limit. A turn
	// beyond them waits in line, and its chat is told its place.
	MaxRunningTurns int
	MaxUserTurns    int
	// UserRate limits how many messages each user other than an admin may
	// send; the zero Rate means no limit.
	UserRate Rate
	// MaxMessageBytes is the longest message passed to a plugin; zero
	// means 100,000 bytes (a CLI gets the message as one argument, and
	// Linux caps one argument at 128 KiB).
	MaxMessageBytes int
	// Observer, when set, is told about every command, turn and delivery.
	Observer Observer
	// WarmTTL, when positive, starts the next turn's CLI as soon as a turn
	// ends (plugins that are Warmers), and stops it unused after WarmTTL
	// (on Timers); WarmMax bounds the warm CLIs of the whole bot, zero
	// meaning 4. WarmMaxFrom says where WarmMax came from, for /status
	// ("chosen from 3.1 GiB of available memory"). WarmPressure, when set,
	// reports whether memory is short: while it is, a warm CLI coming in
	// has the oldest stopped first, itself last (issue 33).
	WarmTTL      time.Duration
	WarmMax      int
	WarmMaxFrom  string
	WarmPressure func() bool
	// StopDeadline bounds how long WindDown waits for cancelled turns to
	// end; zero means 15 seconds. It runs on real time.
	StopDeadline time.Duration
	// Ask lets plugins ask the chat before a tool runs (APPROVALS=ask);
	// ApprovalTimeout denies a question nobody answered (on Timers), zero
	// meaning DefaultApprovalTimeout.
	Ask             bool
	ApprovalTimeout time.Duration
	// BackgroundLimit is how long a turn stays open after its answer for
	// background work its CLI reports on when it ends (on Timers); zero
	// means DefaultBackgroundLimit.
	BackgroundLimit time.Duration
	// Busy is what a message written while its conversation's turn runs
	// does: BusySteer (the default) or BusyQueue.
	Busy string
	// AllowBypassModes lets users who are not admins choose a mode in
	// which tools run unapproved (ALLOW_BYPASS_MODES).
	AllowBypassModes bool
	// Worktrees, when true, gives every conversation started in a git
	// repository its own worktree, as --worktree does (WORKTREES=always);
	// WorktreeDir is where worktrees go, empty meaning
	// <repository>/.jakebot/worktrees.
	Worktrees   bool
	WorktreeDir string
	// Budgets bound what turns cost (BUDGET_*).
	Budgets Budgets
	// AttachmentMaxBytes bounds a file in or out; zero means
	// DefaultAttachmentMaxBytes. Transcribe hears voice notes; nil means
	// they are refused with how to enable it.
	AttachmentMaxBytes int64
	Transcribe         Transcriber
	// Sandbox says in a line what the CLIs of this machine run behind,
	// for /status; empty says nothing.
	Sandbox string
	// Gateway says which gateway serves and since when, for /status,
	// where several stand by for one another (NATS_URL); empty says
	// nothing.
	Gateway string
	// LongReplyPages: an answer longer than that many messages comes as
	// its first page, a note and the whole answer as a Markdown file that
	// Document renders, where the platform sends files. Zero or a nil
	// Document: every page is a message.
	LongReplyPages int
	Document       func([]ResponseBlock) string
	// ParseCron reads /every's cron expressions (bot/cronexpr wraps a
	// well-kept library); nil refuses them, and /every takes intervals
	// only.
	ParseCron func(expr string) (Cron, error)
	// Runners, when set, runs conversations started in "name:path" on
	// other machines (NATS_URL); nil keeps every turn on this one.
	Runners Runners
	// LocalTurns, when set, records the turns running on this machine
	// outside the process, for the process that takes over from this one
	// if it dies (several gateways on NATS): it tells their conversations
	// that they were lost.
	LocalTurns LocalTurns
	// StoreSchedules, when set, stores the schedules where the process
	// that takes over from this one reads them: a due schedule is sent
	// only once its next time is stored, so that it is never sent twice,
	// here and there. A failure keeps it due, to try again.
	StoreSchedules func() error
	// NotifyAfter: a turn that ran longer notifies its author when it
	// ends (Notifier); zero means 60 seconds, negative never. A question
	// always notifies.
	NotifyAfter time.Duration
	// AgentTools, when set, is the bot's MCP server, which every turn's
	// agent may reach its conversation through (AGENT_TOOLS).
	AgentTools AgentTools
	// Redactor blanks the bot's secrets out of everything sent to a chat,
	// whatever a CLI printed.
	Redactor *Redactor
	// LimitWarn is the used percent of a CLI's usage window from which
	// the reply's footer warns of it (LIMIT_WARN); zero means
	// DefaultLimitWarn.
	LimitWarn int
	// UnattendedApprovals is how a question of a turn nobody may be
	// watching (Message.Unattended) is answered: UnattendedDeny (the
	// default) denies it at once, UnattendedAsk asks it as any other.
	UnattendedApprovals string
	// UnattendedTurnsPerDay caps each user's unattended turns
	// (Message.Unattended) per UTC day: a schedule that fires once they
	// are spent is skipped (UNATTENDED_TURNS_PER_DAY). Zero: no cap.
	UnattendedTurnsPerDay int
	// Reactions shows each turn's state as an emoji reaction on its
	// message where the platform can (Reacter; REACTIONS).
	Reactions bool
	// ReviewPlugin, when set, pairs every new conversation whose plugin
	// is another with it as reviewer, for ReviewRounds rounds (zero
	// means DefaultReviewRounds), as /pair does (REVIEW_PLUGIN,
	// REVIEW_ROUNDS; core/pair.go).
	ReviewPlugin string
	ReviewRounds int
	// Clock times replies (edit intervals, rate-limit waits), spend days
	// and schedules. Timers times what waits on a person or an idle CLI:
	// an unanswered question, an unused warm CLI. Both default to real
	// time; they are apart so that a test can let every edit interval
	// pass at once and still decide when a question times out.
	Clock  Clock
	Timers Clock
	Logger *slog.Logger
}

// withDefaults fills in what cfg leaves zero.
func (cfg RouterConfig) withDefaults() RouterConfig {
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = 30 * time.Minute
	}
	if cfg.QueueLimit <= 0 {
		cfg.QueueLimit = 5
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 10 * time.Minute
	}
	if cfg.NotifyAfter == 0 {
		cfg.NotifyAfter = time.Minute
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 100_000
	}
	if cfg.WarmMax <= 0 {
		cfg.WarmMax = 4
	}
	if cfg.StopDeadline <= 0 {
		cfg.StopDeadline = 15 * time.Second
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = DefaultApprovalTimeout
	}
	if cfg.Busy == "" {
		cfg.Busy = BusySteer
	}
	if cfg.BackgroundLimit <= 0 {
		cfg.BackgroundLimit = DefaultBackgroundLimit
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Timers == nil {
		cfg.Timers = SystemClock{}
	}
	if cfg.Access == nil {
		cfg.Access = NewAccess()
	}
	if cfg.ReviewRounds <= 0 {
		cfg.ReviewRounds = DefaultReviewRounds
	}
	return cfg
}

// What a message written while its conversation's turn runs does
// (BUSY, RouterConfig.Busy).
const (
	// BusySteer adds it to the running turn where the CLI can take it
	// there, else it waits.
	BusySteer = "steer"
	// BusyQueue has it wait for the turn to end, with Steer and Send now
	// buttons.
	BusyQueue = "queue"
)

// DefaultReviewRounds is how many reviews a pair loop has at most when
// neither /pair nor REVIEW_ROUNDS says.
const DefaultReviewRounds = 2

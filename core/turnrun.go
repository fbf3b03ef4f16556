package core

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// turnRun is a turn between its steps: admitted, streamed, ended.
type turnRun struct {
	qm      queued
	q       *runningTurn
	conv    Conversation
	plugin  Plugin
	workdir string
	user    string
	maxUSD  float64
	reply   *Reply
	started time.Time
	// cancel ends the turn, timeout is its TurnTimeout (a timer, not a
	// deadline: once the turn has answered, its background work has
	// BackgroundLimit instead), bg its background work.
	cancel  context.CancelCauseFunc
	timeout *time.Timer
	bg      backgroundWatch
	// mu guards what the turn's events set while it streams: sessionID is
	// the session the turn is in, as the CLI reported it; usage are the
	// windows the CLI reported in this turn; refusedBy is the first that
	// refused it, cut whether the turn had done some work by then.
	// progressed is set once it does.
	// said is what the turn's agent wrote (core/sidebyside.go).
	said       saidText
	mu         sync.Mutex
	sessionID  string
	usage      []UsageWindow
	refusedBy  *UsageWindow
	cut        bool
	progressed atomic.Bool
}

// setSession records the session the turn is in, as the CLI reported it.
func (t *turnRun) setSession(sessionID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sessionID = sessionID
}

// session is the session the turn is in.
func (t *turnRun) session() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessionID
}

// endReaction is the reaction a turn that ended with outcome leaves on
// its message; continued, it goes on at a window's reset.
func endReaction(outcome string, continued bool) Reaction {
	switch {
	case continued:
		return ReactionLimit
	case outcome == OutcomeOK:
		return ReactionDone
	case outcome == OutcomeError || outcome == OutcomePanic:
		return ReactionFailed
	}
	return ReactionStopped
}

func endIcon(outcome string) string {
	if outcome == OutcomeOK {
		return "✅"
	}
	return "❌"
}

func endWords(outcome string) string {
	if outcome == OutcomeOK {
		return "finished your turn"
	}
	return "ended your turn with an error"
}

// pluginPanic is the error a recovered plugin panic becomes; it unwraps
// to the UserError the chat sees.
type pluginPanic struct{ err *UserError }

func (p *pluginPanic) Error() string { return p.err.Error() }

func (p *pluginPanic) Unwrap() error { return p.err }

func cancelOutcome(cause error) string {
	switch {
	case errors.Is(cause, ErrStopped), errors.Is(cause, ErrSentNow):
		return OutcomeStopped
	case errors.Is(cause, ErrTurnTimeout), errors.Is(cause, ErrBackgroundLimit):
		return OutcomeTimeout
	case errors.Is(cause, ErrIdleTimeout):
		return OutcomeIdleTimeout
	case errors.Is(cause, ErrShutdown):
		return OutcomeShutdown
	}
	return OutcomeCancelled
}

// backgroundID is the ID of a reply's background line: each report
// replaces it.
const backgroundID = "background"

// backgroundWatch is a turn's background work as the router keeps it: a
// CLI working in the background prints nothing, so the idle watch is
// paused meanwhile, and once the turn has answered BackgroundLimit
// bounds the rest of it in place of TurnTimeout. Only the turn's emit
// uses it, then its end.
type backgroundWatch struct {
	started []string // what ran, for the line once all ended
	paused  bool
	limit   Timer
}

// backgroundState is a running turn's background work for /status, or
// "".
func backgroundState(tasks []string) string {
	if len(tasks) == 0 {
		return ""
	}
	return ", background: " + Background{Tasks: tasks}.Summary()
}

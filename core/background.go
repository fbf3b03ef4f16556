package core

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

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

// backgroundID is the ID of a reply's background line: each report
// replaces it.
const backgroundID = "background"

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

// background shows b in t's reply and in /status, and keeps the turn
// open for it as backgroundWatch says.
func (r *Router) background(t *turnRun, b Background, idle *idleWatch) {
	w := &t.bg
	r.turns.setBackground(t.q, b.Tasks)
	running := len(b.Tasks) > 0
	switch {
	case running:
		w.started = b.Tasks
		t.reply.Add(ResponseBlock{Kind: BlockStatus, ID: backgroundID, Text: "⏳ Background: " + b.Summary() +
			" (the reply goes on when it ends; /stop ends it)"})
	case len(w.started) > 0:
		t.reply.Add(ResponseBlock{Kind: BlockStatus, ID: backgroundID, Text: "✓ Background work ended: " +
			Background{Tasks: w.started}.Summary()})
	}
	if running != w.paused {
		if running {
			idle.pause()
		} else {
			idle.resume()
		}
		w.paused = running
	}
	if running && b.Answered && w.limit == nil {
		t.timeout.Stop()
		w.limit = r.cfg.Timers.AfterFunc(r.cfg.BackgroundLimit, func() { t.cancel(ErrBackgroundLimit) })
	}
}

// endBackground forgets the turn's background work once it has ended.
func (r *Router) endBackground(t *turnRun) {
	if t.bg.limit != nil {
		t.bg.limit.Stop()
	}
	r.turns.setBackground(t.q, nil)
}

// backgroundState is a running turn's background work for /status, or
// "".
func backgroundState(tasks []string) string {
	if len(tasks) == 0 {
		return ""
	}
	return ", background: " + Background{Tasks: tasks}.Summary()
}

// backgroundLimitMessage says why a turn's background work was stopped.
func backgroundLimitMessage(cfg RouterConfig) string {
	return fmt.Sprintf("Background work stopped with the turn: it still ran %s after the answer (BACKGROUND_LIMIT), so the CLI was stopped and what it would have reported is lost. The conversation continues with your next message.", cfg.BackgroundLimit)
}

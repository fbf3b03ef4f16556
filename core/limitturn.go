package core

import (
	"context"
	"fmt"
	"time"
)

// A turn refused by a usage window goes on by itself: its message is
// scheduled again at the window's reset, as a Schedule (listed by
// /schedules, removed by /unschedule, kept across restarts, its author's
// access checked again when it fires).

// progresses says whether an event is the turn's work (text, a tool, a
// change), as opposed to a note about it: a turn refused after such
// work was cut part-way, and goes on with "continue".
func progresses(ev Event) bool {
	switch {
	case ev.Kind == EventText:
		return true
	case ev.Kind != EventBlock:
		return false
	}
	switch ev.Block.Kind {
	case BlockText, BlockCode, BlockDiff, BlockToolUse, BlockPlan:
		return true
	}
	return false
}

// continueText is what a continuation sends: "continue" when the turn
// was cut part-way (or its message had no text), else the message again.
const continueText = "continue"

// continueAfterLimit schedules a turn that a usage window refused again at
// the window's reset, and returns what the chat is told; "" when the turn
// was not refused by a window (or was stopped, or the reset is unknown).
func (r *Router) continueAfterLimit(ctx context.Context, t *turnRun, res TurnResult, err error) string {
	if ctx.Err() != nil || (err == nil && !res.IsError) {
		return ""
	}
	r.mu.Lock()
	w, cut := t.refusedBy, t.cut
	r.mu.Unlock()
	now := r.clock.Now()
	if w == nil || !w.ResetsAt.After(now) {
		return ""
	}
	m := t.qm.m
	text := m.Text
	if cut || text == "" {
		text = continueText
	}
	window := r.windowName(*w)
	id := r.convs.AddSchedule(Schedule{Key: m.Key, From: m.Author(), UserName: m.UserName, Text: text,
		Next: w.ResetsAt, Limit: window})
	r.armSchedules()
	r.logger.Info("turn refused by a usage window: continued at its reset", "id", t.qm.id, "conversation", m.Key.String(),
		"window", window, "resets_at", w.ResetsAt, "schedule", id)
	what := "this message will be sent again then"
	if text == continueText {
		what = `"continue" will be sent then, to pick the turn up where it stopped`
	}
	return fmt.Sprintf("🔁 The %s window is used up; it resets at %s (in %s): %s, in this conversation (schedule #%d: /unschedule %d cancels it).",
		window, resetTime(now, w.ResetsAt), w.ResetsAt.Sub(now).Round(time.Minute), what, id, id)
}

// windowName is a window's name with its CLI's: "Claude Code 5h".
func (r *Router) windowName(w UsageWindow) string {
	name := r.pluginName(w.Plugin)
	if w.Runner != "" {
		return name + " " + w.Window + " (" + w.Runner + ")"
	}
	return name + " " + w.Window
}

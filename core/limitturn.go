package core

import (
	"context"
	"fmt"
	"slices"
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

// continuation is a refused turn's schedule at the reset, and what the
// chat is told of it.
type continuation struct {
	id   int
	note string
}

// continueAfterLimit, the scheduler's hook at a turn's end, schedules a turn that a usage window refused again at
// the window's reset; nil when the turn was not refused by a window (or
// was stopped, or the reset is unknown).
func (sch *scheduler) continueAfterLimit(ctx context.Context, t *turnRun, res TurnResult, err error) *continuation {
	r := sch.r
	if ctx.Err() != nil || (err == nil && !res.IsError) {
		return nil
	}
	if t.qm.side != nil {
		// A turn of agents side by side is the bot's, not the person's
		// message: it is not sent again as theirs. The limit's note says
		// when the window resets.
		return nil
	}
	t.mu.Lock()
	w, cut := t.refusedBy, t.cut
	t.mu.Unlock()
	now := r.clock.Now()
	if w == nil || !w.ResetsAt.After(now) {
		return nil
	}
	m := t.qm.m
	text := m.Text
	if cut || text == "" {
		text = continueText
	}
	window := r.usage.windowName(*w)
	id := r.convs.AddSchedule(Schedule{Key: m.Key, From: m.Author(), UserName: m.UserName, Text: text,
		Next: w.ResetsAt, Limit: window, Prompt: m.Text})
	r.sched.armSchedules()
	r.logger.Info("turn refused by a usage window: continued at its reset", "id", t.qm.id, "conversation", m.Key.String(),
		"window", window, "resets_at", w.ResetsAt, "schedule", id)
	what := "this message will be sent again then"
	if text == continueText {
		what = `"continue" will be sent then, to pick the turn up where it stopped`
	}
	return &continuation{id: id, note: fmt.Sprintf("🔁 The %s window is used up; it resets at %s (in %s): %s, in this conversation (schedule #%d).",
		window, resetTime(now, w.ResetsAt), w.ResetsAt.Sub(now).Round(time.Minute), what, id)}
}

// offerContinuation posts c's note with its buttons: Cancel, and Start
// with each other plugin now (in a new conversation there, the same
// workdir, the refused message).
func (sch *scheduler) offerContinuation(a *attached, to Target, plugin string, c *continuation) {
	r := sch.r
	choices := []Choice{{Label: "Cancel", Command: fmt.Sprintf("/unschedule %d", c.id)}}
	typed := fmt.Sprintf("/unschedule %d cancels it", c.id)
	for _, id := range r.cfg.Plugins.IDs() {
		if id != plugin {
			cmd := fmt.Sprintf("/%s now %d", id, c.id)
			choices = append(choices, Choice{Label: "Start with " + r.cfg.Plugins.name(id) + " now", Command: cmd})
			typed += fmt.Sprintf("; %s sends it now to %s, in a new conversation here", cmd, r.cfg.Plugins.name(id))
		}
	}
	r.offer(a, to, c.note, choices, typed+".")
}

// keepUsage records a window t's CLI reported in book and remembers it in
// t, for the footer.
func (t *turnRun) keepUsage(book *usageBook, w UsageWindow) {
	w.Plugin, w.Runner = t.conv.Plugin, t.conv.Runner
	book.set(w)
	t.mu.Lock()
	t.usage = append(slices.DeleteFunc(t.usage, func(o UsageWindow) bool { return o.Window == w.Window }), w)
	if w.Rejected && t.refusedBy == nil {
		t.refusedBy, t.cut = &w, t.progressed.Load()
	}
	t.mu.Unlock()
}

// limitNotes are the footer's warnings: each window t's CLI reported past
// LIMIT_WARN, at most once per window.
func (t *turnRun) limitNotes(book *usageBook) []string {
	t.mu.Lock()
	windows := slices.Clone(t.usage)
	t.mu.Unlock()
	var notes []string
	for _, w := range windows {
		if w.UsedPercent >= book.warn || w.Rejected {
			notes = append(notes, book.windowLine(w))
		}
	}
	return notes
}

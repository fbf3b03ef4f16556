package claude

import (
	"encoding/json"
	"slices"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
)

// backgroundTask is one entry of system/background_tasks_changed: a
// command or agent running in the background (run_in_background, and
// Agent by default).
type backgroundTask struct {
	TaskID      string `json:"task_id"`
	Description string `json:"description"`
}

// taskPatch is what a system/task_updated line changed of a task: its
// status ("pending", "running", "paused", or one of the ends
// "completed", "failed", "killed"), and whether it moved to the
// background.
type taskPatch struct {
	Status         string `json:"status"`
	Description    string `json:"description"`
	IsBackgrounded *bool  `json:"is_backgrounded"`
}

// ended reports whether a task in status s has ended.
func ended(s string) bool { return s == "completed" || s == "failed" || s == "killed" }

// backgroundWork is what Claude Code runs in the background. After the
// turn's result its process lives on while such work runs, and when the
// work ends it re-invokes the model with a <task-notification> and writes
// one more turn and result (plugins/LIVE-TURNS.md): the reply waits for
// it, and the router keeps the turn open (core.Background), its stdin
// open too (with its input closed the CLI stops waiting for the work on
// its own terms: plugins/claude/FORMAT.md).
//
// The CLI tells of the work in several lines, each enough alone:
// system/task_started (is_backgrounded), task_updated (a move to the
// background, an end), task_notification (an end) and
// background_tasks_changed (the whole list): the running set is learnt
// from every one of them, so that a line missing or late does not end the
// turn while the work runs.
type backgroundWork struct {
	// running are the ids of the tasks running in the background, in
	// the order they started; described holds every task's description.
	running   []string
	described map[string]string
	// ids are the tasks ever in the background, whose notifications are
	// shown (a foreground subagent's are its Agent line's).
	ids map[string]bool
	// followUp is set when the work that outlived a result has ended,
	// until the next result: the CLI answers the work's end with one more
	// turn of its own.
	followUp bool
}

// add counts task id as running in the background, described as desc
// where the CLI says so, and reports whether that changed the work.
func (w *backgroundWork) add(id, desc string) bool {
	if w.ids == nil {
		w.ids, w.described = map[string]bool{}, map[string]string{}
	}
	if desc != "" {
		w.described[id] = display.FirstLine(desc)
	}
	w.ids[id] = true
	if slices.Contains(w.running, id) {
		return false
	}
	w.running = append(w.running, id)
	return true
}

// remove counts task id as ended and reports whether it was running.
func (w *backgroundWork) remove(id string) bool {
	i := slices.Index(w.running, id)
	if i < 0 {
		return false
	}
	w.running = slices.Delete(w.running, i, i+1)
	return true
}

// tasks describes the work running now.
func (w *backgroundWork) tasks() []string {
	out := make([]string, len(w.running))
	for i, id := range w.running {
		out[i] = w.described[id]
	}
	return out
}

// backgroundChanged takes the work running now, as the CLI lists it.
func (p *Parser) backgroundChanged(raw json.RawMessage) {
	var tasks []backgroundTask
	if json.Unmarshal(raw, &tasks) != nil {
		return
	}
	was := p.bg.tasks()
	p.bg.running = p.bg.running[:0]
	for _, t := range tasks {
		p.bg.add(t.TaskID, t.Description)
	}
	p.workChanged(!slices.Equal(was, p.bg.tasks()))
}

// taskStarted takes a task the CLI started: work in the background
// unless the tool call that started it waits for it.
func (p *Parser) taskStarted(l *line) {
	if l.IsBackgrounded == nil || !*l.IsBackgrounded {
		if p.bg.described == nil {
			p.bg.ids, p.bg.described = map[string]bool{}, map[string]string{}
		}
		p.bg.described[l.TaskID] = display.FirstLine(l.Description)
		return
	}
	p.workChanged(p.bg.add(l.TaskID, l.Description))
}

// taskUpdated takes a change of a task: its move to the background, or
// its end.
func (p *Parser) taskUpdated(l *line) {
	if l.Patch == nil {
		return
	}
	switch {
	case ended(l.Patch.Status):
		p.workChanged(p.bg.remove(l.TaskID))
	case l.Patch.IsBackgrounded != nil && *l.Patch.IsBackgrounded:
		p.workChanged(p.bg.add(l.TaskID, l.Patch.Description))
	}
}

// workChanged reports the work when it changed, and once the work that
// outlived the result has all ended, says the turn takes no more
// messages, whether or not the CLI writes another result.
func (p *Parser) workChanged(changed bool) {
	if !changed {
		return
	}
	p.reportBackground()
	if len(p.bg.running) == 0 && p.result != nil {
		p.bg.followUp = true
		if p.OnResult != nil {
			p.OnResult()
		}
	}
}

// reportBackground tells the router what runs in the background, and
// whether the turn has answered already.
func (p *Parser) reportBackground() {
	b := &core.Background{Tasks: p.bg.tasks(), Answered: p.result != nil}
	p.emit(core.Event{Kind: core.EventBackground, Background: b})
}

// backgrounded reports whether a Bash result is that of a command sent
// to the background (its result is only where its output goes).
func backgrounded(toolUseResult json.RawMessage) bool {
	var r struct {
		BackgroundTaskID string `json:"backgroundTaskId"`
	}
	return json.Unmarshal(toolUseResult, &r) == nil && r.BackgroundTaskID != ""
}

// backgroundEnded shows what a background task's end notification says
// ("Background command "Slow background job" completed (exit code 0)"),
// and counts the task as ended.
func (p *Parser) backgroundEnded(taskID, summary string) {
	if !p.bg.ids[taskID] {
		return
	}
	if summary != "" {
		p.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, ID: "background-" + taskID,
			Text: "↳ " + display.FirstLine(summary)}))
	}
	p.workChanged(p.bg.remove(taskID))
}

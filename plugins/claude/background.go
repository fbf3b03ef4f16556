package claude

import (
	"encoding/json"

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

// backgroundWork is what Claude Code runs in the background. After the
// turn's result its process lives on while such work runs, and when the
// work ends it re-invokes the model with a <task-notification> and writes
// one more turn and result (plugins/LIVE-TURNS.md): the reply waits for
// it, and the router keeps the turn open (core.Background).
type backgroundWork struct {
	running []string
	// ids are the tasks ever in the background, whose notifications are
	// shown (a foreground subagent's are its Agent line's).
	ids map[string]bool
}

// backgroundChanged reports the work running now.
func (p *Parser) backgroundChanged(raw json.RawMessage) {
	var tasks []backgroundTask
	if json.Unmarshal(raw, &tasks) != nil {
		return
	}
	if p.bg.ids == nil {
		p.bg.ids = map[string]bool{}
	}
	p.bg.running = p.bg.running[:0]
	for _, t := range tasks {
		p.bg.ids[t.TaskID] = true
		p.bg.running = append(p.bg.running, display.FirstLine(t.Description))
	}
	p.reportBackground()
	if len(p.bg.running) == 0 && p.result != nil && p.OnResult != nil {
		// The work that outlived the result has ended: the turn takes no
		// more messages, whether or not the CLI writes another result.
		p.OnResult()
	}
}

// reportBackground tells the router what runs in the background, and
// whether the turn has answered already.
func (p *Parser) reportBackground() {
	b := &core.Background{Tasks: append([]string(nil), p.bg.running...), Answered: p.result != nil}
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
// ("Background command "Slow background job" completed (exit code 0)").
func (p *Parser) backgroundEnded(taskID, summary string) {
	if !p.bg.ids[taskID] || summary == "" {
		return
	}
	p.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, ID: "background-" + taskID,
		Text: "↳ " + display.FirstLine(summary)}))
}

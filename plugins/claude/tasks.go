package claude

import (
	"encoding/json"
	"slices"

	"github.com/jake-bot/jake-bot/core"
)

// taskList follows the agent's task list through its tools: TodoWrite
// (the whole list each time; Claude Code before 2.1.2xx, or with
// CLAUDE_CODE_ENABLE_TASKS=0), and TaskCreate/TaskUpdate (one task at a
// time, the id known only from TaskCreate's result). See FORMAT.md and
// plugins/LIVE-TURNS.md. Read by the parsing goroutine only.
type taskList struct {
	tasks []task
	// creating are the TaskCreate calls whose result (the task's id) has
	// not come yet, by tool use id.
	creating map[string]int
}

type task struct {
	id   string
	item core.PlanItem
}

// isTaskTool reports whether the tool is one of the task list's, shown
// as the plan rather than as tool lines.
func isTaskTool(name string) bool {
	return name == "TodoWrite" || name == "TaskCreate" || name == "TaskUpdate"
}

// toolUse folds a task tool's call into the list; it reports whether the
// list changed.
func (tl *taskList) toolUse(name, id string, input json.RawMessage) bool {
	switch name {
	case "TodoWrite":
		var in struct {
			Todos []struct {
				Content string `json:"content"`
				Status  string `json:"status"`
			} `json:"todos"`
		}
		if json.Unmarshal(input, &in) != nil {
			return false
		}
		tl.tasks = tl.tasks[:0]
		for _, t := range in.Todos {
			tl.tasks = append(tl.tasks, task{item: core.PlanItem{Text: t.Content, Status: core.PlanStatusOf(t.Status)}})
		}
		return true
	case "TaskCreate":
		var in struct {
			Subject string `json:"subject"`
		}
		if json.Unmarshal(input, &in) != nil || in.Subject == "" {
			return false
		}
		if tl.creating == nil {
			tl.creating = map[string]int{}
		}
		tl.creating[id] = len(tl.tasks)
		tl.tasks = append(tl.tasks, task{item: core.PlanItem{Text: in.Subject, Status: core.PlanPending}})
		return true
	case "TaskUpdate":
		var in struct {
			TaskID  string `json:"taskId"`
			Subject string `json:"subject"`
			Status  string `json:"status"`
		}
		if json.Unmarshal(input, &in) != nil {
			return false
		}
		i := slices.IndexFunc(tl.tasks, func(t task) bool { return t.id == in.TaskID })
		if i < 0 {
			return false
		}
		switch {
		case in.Status == "deleted":
			tl.tasks = slices.Delete(tl.tasks, i, i+1)
		case in.Status != "":
			tl.tasks[i].item.Status = core.PlanStatusOf(in.Status)
		}
		if in.Subject != "" && in.Status != "deleted" {
			tl.tasks[i].item.Text = in.Subject
		}
		return true
	}
	return false
}

// created takes a TaskCreate's result, which names the task's id.
func (tl *taskList) created(toolUseID string, result json.RawMessage) {
	i, ok := tl.creating[toolUseID]
	if !ok {
		return
	}
	delete(tl.creating, toolUseID)
	var r struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if json.Unmarshal(result, &r) == nil && i < len(tl.tasks) {
		tl.tasks[i].id = r.Task.ID
	}
}

// block is the list as the reply's plan.
func (tl *taskList) block() core.ResponseBlock {
	items := make([]core.PlanItem, len(tl.tasks))
	for i, t := range tl.tasks {
		items[i] = t.item
	}
	return core.PlanBlock(items)
}

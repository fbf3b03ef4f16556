package gemini

import (
	"encoding/json"

	"github.com/jake-bot/jake-bot/core"
)

// acpPlanEntry is one task of an ACP agent's plan (session/update
// "plan", which replaces the whole plan each time).
type acpPlanEntry struct {
	Content string `json:"content"`
	Status  string `json:"status"` // pending, in_progress, completed
}

// acpUsage is ACP's "usage_update": the context the session fills (used)
// of its model's window (size), in tokens.
type acpUsage struct {
	Used int `json:"used"`
	Size int `json:"size"`
}

// plan shows the agent's plan as the reply's checklist. The pinned Gemini
// CLI (0.61.0) knows the update's schema but sends none (its todo tool,
// write_todos, is a tool call over ACP); other ACP agents do.
func (a *acp) plan(raw json.RawMessage) {
	var entries []acpPlanEntry
	if json.Unmarshal(raw, &entries) != nil {
		return
	}
	items := make([]core.PlanItem, 0, len(entries))
	for _, e := range entries {
		items = append(items, core.PlanItem{Text: e.Content, Status: core.PlanStatusOf(e.Status)})
	}
	a.link.Emit(core.BlockEvent(core.PlanBlock(items)))
}

// withContext gives r the context's fill from the last usage_update, if
// the agent sent one (the pinned Gemini CLI does not: its prompt's answer
// has only the turn's token counts).
func (a *acp) withContext(r *core.TurnResult) {
	if a.usage.Size > 0 && a.usage.Used > 0 {
		r.ContextTokens, r.ContextWindow = a.usage.Used, a.usage.Size
	}
}

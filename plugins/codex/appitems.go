package codex

import (
	"encoding/json"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
)

// appItem is a ThreadItem as the app-server sends it: the same items as
// `exec --json`, in camelCase.
type appItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Status           string          `json:"status"`
	Text             string          `json:"text"`
	Summary          []string        `json:"summary"`
	Command          string          `json:"command"`
	AggregatedOutput *string         `json:"aggregatedOutput"`
	ExitCode         *int            `json:"exitCode"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Query            string          `json:"query"`
	Prompt           string          `json:"prompt"`
	Error            *errorInfo      `json:"error"`
	// Kind, AgentPath and AgentThreadID are a subAgentActivity's.
	Kind          string `json:"kind"`
	AgentPath     string `json:"agentPath"`
	AgentThreadID string `json:"agentThreadId"`
	Changes       []struct {
		Path string `json:"path"`
		Diff string `json:"diff"`
		Kind struct {
			Type     string `json:"type"`
			MovePath string `json:"move_path"`
		} `json:"kind"`
	} `json:"changes"`
}

// execTypes names each app-server item type as `exec --json` does, so one
// mapping from items to blocks serves both.
var execTypes = map[string]string{
	"agentMessage": "agent_message", "reasoning": "reasoning", "plan": "plan",
	"commandExecution": "command_execution", "fileChange": "file_change", "mcpToolCall": "mcp_tool_call",
	"collabAgentToolCall": "collab_tool_call", "webSearch": "web_search",
}

// asItem converts an app-server item to the exec form the parser reads.
func (a *appItem) asItem() *item {
	it := &item{ID: a.ID, Type: execTypes[a.Type], Status: a.Status, Text: a.Text, Command: a.Command,
		ExitCode: a.ExitCode, Server: a.Server, Tool: a.Tool, Arguments: a.Arguments, Query: a.Query,
		Prompt: a.Prompt, Error: a.Error}
	if it.Status == "inProgress" {
		it.Status = "in_progress"
	}
	if a.AggregatedOutput != nil {
		it.AggregatedOutput = *a.AggregatedOutput
	}
	if a.Type == "reasoning" && it.Text == "" {
		it.Text = strings.Join(a.Summary, "\n")
	}
	for _, c := range a.Changes {
		d := unifiedDiff(c.Kind.Type, c.Diff)
		if i := strings.LastIndex(d, "\n\nMoved to: "); i >= 0 && c.Kind.MovePath != "" {
			// Where the file went, which the block's path says.
			d = strings.TrimRight(d[:i], "\n") + "\n"
		}
		it.Changes = append(it.Changes, change{Path: c.Path, Kind: c.Kind.Type, Diff: d, MovePath: c.Kind.MovePath})
	}
	return it
}

// unifiedDiff is a change's diff as a unified diff: the app-server gives
// a file added or deleted as its content.
func unifiedDiff(kind, diff string) string {
	if diff == "" || strings.HasPrefix(diff, "@@") {
		return diff
	}
	switch kind {
	case "add":
		return diffs.NewFile(diff)
	case "delete":
		return diffs.DeletedFile(diff)
	}
	return diff
}

// approval is a request from the app-server to approve a command or a
// file change.
type approval struct {
	Command string `json:"command"`
	Cwd     string `json:"cwd"`
	ItemID  string `json:"itemId"`
	Reason  string `json:"reason"`
}

// Notification folds one app-server notification into the turn: items
// and text deltas become events as `exec --json` lines do, turn/completed
// ends the turn. It reports whether the turn ended.
func (p *Parser) Notification(method string, params json.RawMessage) bool {
	if p.helperNotification(method, params) {
		return false
	}
	switch method {
	case "item/agentMessage/delta":
		var d struct {
			ItemID string `json:"itemId"`
			Delta  string `json:"delta"`
		}
		if json.Unmarshal(params, &d) == nil && d.Delta != "" {
			if p.streamed == nil {
				p.streamed = make(map[string]bool)
			}
			p.text(d.Delta, !p.streamed[d.ItemID])
			p.streamed[d.ItemID] = true
		}
	case "item/started", "item/completed":
		p.appItem(method == "item/completed", params)
	case "thread/tokenUsage/updated":
		p.tokenUsage(params)
	case "account/rateLimits/updated":
		p.rateLimits(params)
	case "turn/plan/updated":
		p.planUpdated(params)
	case "error":
		var n struct {
			Error     errorInfo `json:"error"`
			WillRetry bool      `json:"willRetry"`
		}
		if json.Unmarshal(params, &n) == nil && n.Error.Message != "" && !n.WillRetry {
			p.pending = n.Error.Message
		}
	case "turn/completed":
		p.turnCompleted(params)
		return true
	}
	return false
}

// appItem shows an item that started or completed.
func (p *Parser) appItem(completed bool, params json.RawMessage) {
	var n struct {
		Item *appItem `json:"item"`
	}
	if json.Unmarshal(params, &n) != nil || n.Item == nil {
		return
	}
	if n.Item.Type == "agentMessage" && p.streamed[n.Item.ID] {
		return // its text arrived in deltas
	}
	if n.Item.Type == "subAgentActivity" {
		p.helperActivity(completed, n.Item)
		return
	}
	phase := "item.started"
	if completed {
		phase = "item.completed"
	}
	p.item(phase, n.Item.asItem())
}

// turnCompleted ends the turn as it ended: failed, or completed or
// interrupted (which the bot says itself).
func (p *Parser) turnCompleted(params json.RawMessage) {
	var n struct {
		Turn struct {
			Status string     `json:"status"`
			Error  *errorInfo `json:"error"`
		} `json:"turn"`
	}
	_ = json.Unmarshal(params, &n)
	if n.Turn.Status != "failed" {
		p.Flush()
		p.finish(false)
		return
	}
	msg := "Codex reported a failed turn."
	if n.Turn.Error != nil && n.Turn.Error.Message != "" {
		msg = apiMessage(n.Turn.Error.Message)
	}
	p.pending = ""
	p.block(core.ResponseBlock{Kind: core.BlockError, Text: msg})
	p.finish(true)
}

// approvalQuestion is req, a request of method, as the chat sees it.
func approvalQuestion(method string, req approval, answer func(core.Answer)) *core.Question {
	q := &core.Question{Tool: "Shell", Summary: "`" + shellCommand(req.Command) + "`", Answer: answer}
	if method == "item/fileChange/requestApproval" {
		q.Tool, q.Summary = "Edit", "a change to files"
	}
	if req.Reason != "" {
		q.Detail = req.Reason
	}
	return q
}

// decision is the app-server's word for an answer.
func decision(a core.Answer) string {
	switch a.Decision {
	case core.Allow:
		return "accept"
	case core.AllowAlways:
		return "acceptForSession"
	}
	return "decline"
}

// changeSummary is a file change's question text: the files, and the
// start of their diffs.
func changeSummary(it *item, workdir string) (summary, detail string) {
	var paths, texts []string
	for _, c := range it.Changes {
		paths = append(paths, diffs.RelPath(workdir, c.Path))
		texts = append(texts, c.Diff)
	}
	return strings.Join(paths, ", "), diffs.Short(strings.Join(texts, ""), diffs.QuestionLines)
}

// tokenUsage takes the thread's running token counts, and the latest
// response's (the context in use) against the model's window.
func (p *Parser) tokenUsage(params json.RawMessage) {
	var n struct {
		TokenUsage struct {
			Total struct {
				InputTokens       int `json:"inputTokens"`
				CachedInputTokens int `json:"cachedInputTokens"`
				OutputTokens      int `json:"outputTokens"`
			} `json:"total"`
			// Last is the latest response: the context in use.
			Last struct {
				TotalTokens int `json:"totalTokens"`
			} `json:"last"`
			ModelContextWindow int `json:"modelContextWindow"`
		} `json:"tokenUsage"`
	}
	if json.Unmarshal(params, &n) == nil {
		t := n.TokenUsage.Total
		p.usage = usage{InputTokens: t.InputTokens, CachedInputTokens: t.CachedInputTokens, OutputTokens: t.OutputTokens}
		p.context, p.window = n.TokenUsage.Last.TotalTokens, n.TokenUsage.ModelContextWindow
	}
}

// planUpdated shows Codex's plan (its update_plan tool) as the reply's
// checklist; each update replaces the whole plan.
func (p *Parser) planUpdated(params json.RawMessage) {
	var n struct {
		Plan []struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		} `json:"plan"`
	}
	if json.Unmarshal(params, &n) == nil {
		items := make([]core.PlanItem, len(n.Plan))
		for i, st := range n.Plan {
			items[i] = core.PlanItem{Text: st.Step, Status: core.PlanStatusOf(st.Status)}
		}
		p.block(core.PlanBlock(items))
	}
}

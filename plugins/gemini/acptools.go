package gemini

import (
	"encoding/json"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonrpc"
)

// acpToolCall is a tool call as ACP describes it.
type acpToolCall struct {
	ID     string `json:"toolCallId"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

// update folds one session/update notification into the turn.
func (a *acp) update(params json.RawMessage) {
	var n struct {
		Update struct {
			Kind string `json:"sessionUpdate"`
			// Content is one block for a message chunk, a list for a
			// tool call.
			Content json.RawMessage `json:"content"`
			acpToolCall
		} `json:"update"`
	}
	if json.Unmarshal(params, &n) != nil {
		return
	}
	u := n.Update
	switch u.Kind {
	case "agent_message_chunk":
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(u.Content, &c) == nil && c.Type == "text" && c.Text != "" {
			a.link.Emit(core.TextEvent(c.Text))
		}
	case "agent_thought_chunk":
		a.link.Emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, ID: "thinking", Text: "Thinking…"}))
	case "tool_call", "tool_call_update":
		a.tool(u.acpToolCall)
	}
}

// tool shows a tool call's line, keeping what earlier updates said.
func (a *acp) tool(c acpToolCall) {
	if c.ID == "" {
		return
	}
	seen := a.tools[c.ID]
	if c.Title == "" {
		c.Title = seen.Title
	}
	if c.Kind == "" {
		c.Kind = seen.Kind
	}
	a.tools[c.ID] = c
	status := core.ToolRunning
	switch c.Status {
	case "completed":
		status = core.ToolDone
	case "failed":
		status = core.ToolFailed
	}
	a.link.Emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockToolUse, ID: c.ID, Tool: acpToolName(c.Kind), Text: c.Title, Status: status}))
}

// acpToolName names a tool by its ACP kind.
func acpToolName(kind string) string {
	switch kind {
	case "execute":
		return "Shell"
	case "edit":
		return "Edit"
	case "read":
		return "Read"
	case "search":
		return "Search"
	case "fetch":
		return "Fetch"
	case "delete":
		return "Delete"
	case "move":
		return "Move"
	}
	return "Tool"
}

// request answers what the CLI asks: permissions go to the chat; anything
// else is refused, so that the CLI never waits for nothing.
func (a *acp) request(m jsonrpc.Message) {
	if m.Method != "session/request_permission" {
		_ = a.rpc.Refuse(m.ID, m.Method)
		return
	}
	var req struct {
		Options []struct {
			ID   string `json:"optionId"`
			Kind string `json:"kind"`
		} `json:"options"`
		ToolCall acpToolCall `json:"toolCall"`
	}
	_ = json.Unmarshal(m.Params, &req)
	a.tool(req.ToolCall)
	option := func(kinds ...string) string {
		for _, k := range kinds {
			for _, o := range req.Options {
				if o.Kind == k {
					return o.ID
				}
			}
		}
		return ""
	}
	call := a.tools[req.ToolCall.ID]
	id := m.ID
	q := &core.Question{Tool: acpToolName(call.Kind), Summary: "`" + strings.TrimSpace(call.Title) + "`", Answer: func(ans core.Answer) {
		choice := option("reject_once", "reject_always")
		switch ans.Decision {
		case core.Allow:
			choice = option("allow_once", "allow_always")
		case core.AllowAlways:
			choice = option("allow_always", "allow_once")
		}
		outcome := map[string]any{"outcome": "selected", "optionId": choice}
		if choice == "" {
			outcome = map[string]any{"outcome": "cancelled"}
		}
		if err := a.rpc.Reply(id, map[string]any{"outcome": outcome}); err != nil {
			a.link.Logger().Warn("gemini --acp: answer a permission request", "err", err)
		}
	}}
	a.link.Emit(core.Event{Kind: core.EventQuestion, Question: q})
}

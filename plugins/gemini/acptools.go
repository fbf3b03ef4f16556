package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonrpc"
)

// acpToolCall is a tool call as ACP describes it.
type acpToolCall struct {
	ID      string       `json:"toolCallId"`
	Title   string       `json:"title"`
	Kind    string       `json:"kind"`
	Status  string       `json:"status"`
	Content []acpContent `json:"content"`
}

// acpContent is what a tool call produced; the CLI reports a file edit as
// a diff, the file's text before and after.
type acpContent struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
	Meta    struct {
		Kind string `json:"kind"` // add or modify
	} `json:"_meta"`
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
			// Entries are a plan's; Used and Size a usage update's.
			Entries json.RawMessage `json:"entries"`
			acpUsage
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
			a.partial.WriteString(c.Text)
			a.link.Emit(core.TextEvent(c.Text))
		}
	case "agent_thought_chunk":
		a.link.Emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, ID: "thinking", Text: "Thinking…"}))
	case "tool_call", "tool_call_update":
		c := u.acpToolCall
		_ = json.Unmarshal(u.Content, &c.Content) // a list, for a tool call
		a.tool(c)
	case "plan":
		a.plan(u.Entries)
	case "usage_update":
		a.usage = u.acpUsage
	}
}

// tool shows a tool call's line, keeping what earlier updates said.
func (a *acp) tool(c acpToolCall) {
	if c.ID == "" {
		return
	}
	a.partial.Reset() // the answer that asked for the call is complete, and recorded
	seen := a.tools[c.ID]
	if c.Title == "" {
		c.Title = seen.Title
	}
	if c.Kind == "" {
		c.Kind = seen.Kind
	}
	if len(c.Content) == 0 {
		c.Content = seen.Content
	}
	a.tools[c.ID] = c
	status := core.ToolRunning
	switch c.Status {
	case "completed":
		if diffs := a.diffBlocks(c); len(diffs) > 0 {
			for _, d := range diffs {
				a.link.Emit(core.BlockEvent(d))
			}
			return
		}
		status = core.ToolDone
	case "failed":
		status = core.ToolFailed
	}
	a.link.Emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockToolUse, ID: c.ID, Tool: acpToolName(c.Kind), Text: c.Title, Status: status}))
}

// diffBlocks are the edits a tool call made, as diff blocks, the first in
// place of the call's line.
func (a *acp) diffBlocks(c acpToolCall) []core.ResponseBlock {
	var out []core.ResponseBlock
	for _, d := range c.Content {
		if d.Type != "diff" || d.Path == "" {
			continue
		}
		id := c.ID
		if len(out) > 0 {
			id = fmt.Sprintf("%s/%d", c.ID, len(out))
		}
		action := "update"
		if d.Meta.Kind == "add" {
			action = "add"
		}
		out = append(out, core.ResponseBlock{Kind: core.BlockDiff, ID: id, Path: diffs.RelPath(a.turn.Workdir, d.Path),
			Action: action, Text: diffs.Lines(d.OldText, d.NewText)})
	}
	return out
}

// editQuestion is what a question about an edit shows: the files and the
// start of their diffs. ok is false for a call that edits nothing.
func (a *acp) editQuestion(c acpToolCall) (summary, detail string, ok bool) {
	var paths, texts []string
	for _, d := range a.diffBlocks(c) {
		paths, texts = append(paths, d.Path), append(texts, d.Text)
	}
	if len(paths) == 0 {
		return "", "", false
	}
	return strings.Join(paths, ", "), diffs.Short(strings.Join(texts, ""), diffs.QuestionLines), true
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
	a.mu.Lock()
	a.asking[string(id)] = true
	a.mu.Unlock()
	q := &core.Question{Tool: acpToolName(call.Kind), Summary: "`" + strings.TrimSpace(call.Title) + "`", Answer: func(ans core.Answer) {
		if !a.answering(id) {
			return // cancelled with the turn
		}
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
		if ans.Decision == core.Deny {
			a.mu.Lock()
			a.denied.Add(display.Call(acpToolName(call.Kind), strings.TrimSpace(call.Title)))
			a.mu.Unlock()
		}
		if err := a.rpc.Reply(id, map[string]any{"outcome": outcome}); err != nil {
			a.link.Logger().Warn("gemini --acp: answer a permission request", "err", err)
		}
	}}
	if summary, detail, ok := a.editQuestion(call); ok {
		q.Summary, q.Detail = summary, detail
	}
	a.link.Emit(core.Event{Kind: core.EventQuestion, Question: q})
}

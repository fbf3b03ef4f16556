package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonrpc"
)

// toolCall is a tool call as ACP describes it.
type toolCall struct {
	ID      string    `json:"toolCallId"`
	Title   string    `json:"title"`
	Kind    string    `json:"kind"`
	Status  string    `json:"status"`
	Content []content `json:"content"`
	// RawInput is the tool's input as the agent gives it; a shell
	// command's is {"command": …} by the agents tried.
	RawInput json.RawMessage `json:"rawInput"`
	// Meta says whose call it is (helpers.go) and, from Qwen Code, the
	// tool's own name.
	Meta toolMeta `json:"_meta"`
}

// toolMeta is what a tool call's _meta says.
type toolMeta struct {
	helperMeta
	ToolName string `json:"toolName"` // Qwen Code's name of the tool
}

// content is what a tool call produced; an agent reports a file edit as a
// diff, the file's text before and after.
type content struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
	Meta    struct {
		Kind string `json:"kind"` // add or modify (Gemini CLI)
	} `json:"_meta"`
	// Content is what a call of type "content" printed.
	Content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// update folds one session/update notification into the turn.
func (a *Client) update(params json.RawMessage) {
	var n struct {
		Update struct {
			Kind string `json:"sessionUpdate"`
			// Content is one block for a message chunk, a list for a
			// tool call.
			Content json.RawMessage `json:"content"`
			// Meta names the subagent whose update it is (helpers.go).
			Meta toolMeta `json:"_meta"`
			toolCall
			// plan
			Entries []struct {
				Content string `json:"content"`
				Status  string `json:"status"`
			} `json:"entries"`
			// usage_update
			Used int `json:"used"`
			Size int `json:"size"`
			// current_mode_update
			CurrentModeID string `json:"currentModeId"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &n) != nil {
		return
	}
	u := n.Update
	u.toolCall.Meta = u.Meta
	if a.helperUpdate(u.Kind, u.toolCall) {
		return
	}
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
		c := u.toolCall
		_ = json.Unmarshal(u.Content, &c.Content) // a list, for a tool call
		a.tool(c)
	case "plan":
		items := make([]core.PlanItem, 0, len(u.Entries))
		for _, e := range u.Entries {
			items = append(items, core.PlanItem{Text: e.Content, Status: core.PlanStatusOf(e.Status)})
		}
		a.link.Emit(core.BlockEvent(core.PlanBlock(items)))
	case "usage_update":
		a.used, a.size = u.Used, u.Size
	case "current_mode_update":
		a.modeChanged(u.CurrentModeID)
	}
}

// tool shows a tool call's line, keeping what earlier updates said.
func (a *Client) tool(c toolCall) {
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
	if len(c.RawInput) == 0 {
		c.RawInput = seen.RawInput
	}
	a.tools[c.ID] = c
	if a.helperCalls[c.ID] {
		return // counted on its subagent's line
	}
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
	b := c.line()
	b.Status = status
	switch {
	case status != core.ToolRunning && a.helpers.Calls(c.ID) > 0:
		b = a.helpers.Done(b, status)
	case a.opts.ToolOutput:
		b.Detail = c.detail(status)
	}
	a.link.Emit(core.BlockEvent(b))
}

// line is a call's line, without its status.
func (c toolCall) line() core.ResponseBlock {
	return core.ResponseBlock{Kind: core.BlockToolUse, ID: c.ID, Tool: ToolName(c.Kind), Text: c.text()}
}

// text is what a call's line says: a shell call's command, else its
// title.
func (c toolCall) text() string {
	var in struct {
		Command string `json:"command"`
	}
	if c.Kind == "execute" && json.Unmarshal(c.RawInput, &in) == nil && in.Command != "" {
		return in.Command
	}
	return strings.TrimSpace(c.Title)
}

// detail is what a finished call printed: a shell command's last lines,
// another tool's first.
func (c toolCall) detail(status core.ToolStatus) string {
	if status == core.ToolRunning {
		return ""
	}
	var out []string
	for _, d := range c.Content {
		if d.Type == "content" && d.Content.Type == "text" {
			out = append(out, d.Content.Text)
		}
	}
	text := strings.Join(out, "\n")
	if c.Kind == "execute" {
		return display.LastLines(text, 3)
	}
	return display.FirstLine(text)
}

// diffBlocks are the edits a tool call made, as diff blocks, the first in
// place of the call's line.
func (a *Client) diffBlocks(c toolCall) []core.ResponseBlock {
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
func (a *Client) editQuestion(c toolCall) (summary, detail string, ok bool) {
	var paths, texts []string
	for _, d := range a.diffBlocks(c) {
		paths, texts = append(paths, d.Path), append(texts, d.Text)
	}
	if len(paths) == 0 {
		return "", "", false
	}
	return strings.Join(paths, ", "), diffs.Short(strings.Join(texts, ""), diffs.QuestionLines), true
}

// ToolName names a tool by its ACP kind.
func ToolName(kind string) string {
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

// permission is a session/request_permission's parameters.
type permission struct {
	Options  []permissionOption `json:"options"`
	ToolCall toolCall           `json:"toolCall"`
}

// permissionOption is one way to answer a permission request.
type permissionOption struct {
	ID   string `json:"optionId"`
	Kind string `json:"kind"`
}

// option is the id of the first option of one of kinds, in their order.
func (p permission) option(kinds ...string) string {
	for _, k := range kinds {
		for _, o := range p.Options {
			if o.Kind == k {
				return o.ID
			}
		}
	}
	return ""
}

// choice is the option that answers decision.
func (p permission) choice(decision core.Decision) string {
	switch decision {
	case core.Allow:
		return p.option("allow_once", "allow_always")
	case core.AllowAlways:
		return p.option("allow_always", "allow_once")
	}
	return p.option("reject_once", "reject_always")
}

// request answers what the agent asks: permissions go to the chat, or
// are denied when the chat does not answer questions; anything else is
// refused, so that the agent never waits for nothing.
func (a *Client) request(m jsonrpc.Message) {
	if m.Method != "session/request_permission" {
		_ = a.rpc.Refuse(m.ID, m.Method)
		return
	}
	var req permission
	_ = json.Unmarshal(m.Params, &req)
	a.tool(req.ToolCall)
	call := a.tools[req.ToolCall.ID]
	helper := a.helperCalls[call.ID]
	id := m.ID
	a.mu.Lock()
	a.asking[string(id)] = true
	a.mu.Unlock()
	answer := func(ans core.Answer) {
		if !a.answering(id) {
			return // cancelled with the turn
		}
		choice := req.choice(ans.Decision)
		outcome := map[string]any{"outcome": "selected", "optionId": choice}
		if choice == "" {
			outcome = map[string]any{"outcome": "cancelled"}
		}
		if ans.Decision == core.Deny {
			a.mu.Lock()
			a.denied.Add(display.Call(ToolName(call.Kind), call.text()))
			a.mu.Unlock()
		}
		if ans.Decision == core.Deny && !helper {
			// The agent reports nothing more of a call it was refused.
			b := call.line()
			b.Status, b.Detail = core.ToolFailed, display.NotRun
			a.link.Emit(core.BlockEvent(b))
		}
		if err := a.rpc.Reply(id, map[string]any{"outcome": outcome}); err != nil {
			a.link.Logger().Warn(a.opts.Name+": answer a permission request", "err", err)
		}
	}
	switch {
	case a.ownTool(call, req) || a.opts.Unasked != nil && a.opts.Unasked(call.ID):
		answer(core.Answer{Decision: core.Allow})
		return
	case !a.turn.Ask || a.turn.ReadOnly:
		// A read-only mode asks before what it would not do alone: a
		// read-only turn refuses it, whatever the chat would answer.
		answer(core.Answer{Decision: core.Deny})
		return
	}
	q := &core.Question{Tool: ToolName(call.Kind), Summary: "`" + call.text() + "`", Answer: answer}
	if summary, detail, ok := a.editQuestion(call); ok {
		q.Summary, q.Detail = summary, detail
	}
	a.link.Emit(core.Event{Kind: core.EventQuestion, Question: q})
}

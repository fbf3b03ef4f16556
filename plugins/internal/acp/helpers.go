package acp

import (
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
)

// Subagents: an agent whose tool runs a subagent (Qwen Code's agent tool)
// reports the subagent's work as updates of its own session, each with
// the parent call in _meta.parentToolCallId: the subagent's tool calls,
// its text, and progress lines on the parent call
// (_meta.subagentProgress). ACP itself has no word for them. The client
// shows each subagent as its parent call's line counting its tool calls
// (display.Helpers, as Claude Code's are shown), never lines of their
// own, and its text is not the turn's answer.

// helperMeta is what an update's _meta says of a subagent.
type helperMeta struct {
	Parent   string `json:"parentToolCallId"`
	Progress bool   `json:"subagentProgress"`
}

// helperUpdate takes an update of a subagent's; it reports whether it
// was one.
func (a *Client) helperUpdate(kind string, c toolCall) bool {
	switch {
	case c.Meta.Progress:
		return true // the parent's line counts the calls itself
	case c.Meta.Parent == "" || c.Meta.Parent == c.ID:
		return false
	case kind == "agent_message_chunk" || kind == "agent_thought_chunk":
		return true
	case kind != "tool_call" && kind != "tool_call_update":
		return false
	}
	parent, ok := a.tools[c.Meta.Parent]
	if a.helperCalls[c.ID] || !ok {
		a.helperCalls[c.ID] = true
		return true
	}
	a.helperCalls[c.ID] = true
	now := ToolName(c.Kind)
	if text := strings.TrimSpace(c.text()); text != "" {
		now += ": " + display.FirstLine(text)
	}
	a.link.Emit(core.BlockEvent(a.helpers.Call(parent.line(), now)))
	return true
}

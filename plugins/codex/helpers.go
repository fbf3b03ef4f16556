package codex

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// Subagents (multi_agent_v2's spawn_agent): each spawned agent runs in a
// thread of its own, and the app-server sends that thread's notifications
// on the same connection, named by its threadId: its items, its token
// usage, its own turn/completed. The turn's thread reports the agent's
// life as subAgentActivity items (started, interacted, interrupted,
// completed, with its agentThreadId). So an agent is one line, by its
// thread, that counts its tool calls (display.Helpers, as Claude Code's
// Agent calls are shown), and nothing of another thread is the turn's own:
// not its text, not its end.

// helperNotification takes a notification of another thread than the
// turn's; it reports whether it was one.
func (p *Parser) helperNotification(method string, params json.RawMessage) bool {
	if p.threadID == "" {
		return false
	}
	var n struct {
		ThreadID string   `json:"threadId"`
		Item     *appItem `json:"item"`
	}
	if json.Unmarshal(params, &n) != nil || n.ThreadID == "" || n.ThreadID == p.threadID {
		return false
	}
	if method == "item/started" && n.Item != nil {
		if now, ok := helperCall(n.Item.asItem()); ok {
			p.block(p.helpers.Call(p.agentLine(n.ThreadID, ""), now))
		}
	}
	return true
}

// helperActivity shows an agent's start and end on its line.
func (p *Parser) helperActivity(completed bool, a *appItem) {
	if !completed || a.AgentThreadID == "" {
		return // each activity is started and completed at once
	}
	line := p.agentLine(a.AgentThreadID, a.AgentPath)
	switch a.Kind {
	case "started":
		line.Status = core.ToolRunning
		p.block(line)
	case "completed":
		p.block(p.helpers.Done(line, core.ToolDone))
	case "interrupted":
		p.block(p.helpers.Done(line, core.ToolFailed))
	}
}

// agentLine is the line of the agent of thread, named by its task path
// ("/root/lister": lister) when it started.
func (p *Parser) agentLine(thread, agentPath string) core.ResponseBlock {
	if p.agentNames == nil {
		p.agentNames = map[string]string{}
	}
	if agentPath != "" {
		p.agentNames[thread] = path.Base(strings.TrimRight(agentPath, "/"))
	}
	return core.ResponseBlock{Kind: core.BlockToolUse, ID: "agent-" + thread, Tool: "Agent", Text: p.agentNames[thread]}
}

// helperCall is what an agent's item says it runs now ("Shell: echo
// one"); ok is false for an item that is no tool call.
func helperCall(it *item) (now string, ok bool) {
	var b core.ResponseBlock
	switch it.Type {
	case "command_execution":
		b = commandBlock(it)
	case "mcp_tool_call":
		b = mcpBlock(it)
	case "web_search":
		b = core.ResponseBlock{Tool: "Web Search", Text: webQuery(it)}
	case "file_change":
		b.Tool = "Edit"
		for _, c := range it.Changes {
			b.Text = strings.TrimSpace(b.Text + " " + c.Path)
		}
	default:
		return "", false
	}
	if b.Text == "" {
		return b.Tool, true
	}
	return b.Tool + ": " + b.Text, true
}

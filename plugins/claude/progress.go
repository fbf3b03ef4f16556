package claude

import (
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// What the agent is doing besides answering: its helpers (subagents) and
// how full its context is. Its plan is in tasks.go.

// subagentCall shows a subagent's tool call (an Agent or Task call's
// helper, its line naming the call as parent) on its parent's line, with
// a count of its calls, rather than as a line of its own.
func (p *Parser) subagentCall(parent string, c contentBlock) {
	name, ok := p.tools[parent]
	if !ok {
		return
	}
	now := ToolName(c.Name)
	if arg := toolArg(c.Name, c.Input); arg != "" {
		now += ": " + arg
	}
	p.emit(core.BlockEvent(p.helpers.Call(core.ResponseBlock{Kind: core.BlockToolUse, ID: parent, Tool: name, Text: p.args[parent]}, now)))
}

// contextWindow is the window of the model the main agent last used, as
// the result line's modelUsage names it (with a suffix such as "[1m]"
// where the session's model has one).
func (p *Parser) contextWindow(l *line) int {
	if mu, ok := l.ModelUsage[p.contextModel]; ok {
		return mu.ContextWindow
	}
	for name, mu := range l.ModelUsage {
		if p.contextModel != "" && strings.HasPrefix(name, p.contextModel+"[") {
			return mu.ContextWindow
		}
	}
	return 0
}

// msgUsage is one model request's tokens: together, what the
// conversation fills of the context window then.
type msgUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

func (u *msgUsage) total() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens
}

package display

import "github.com/jake-bot/jake-bot/core"

// Helpers are a turn's subagents (Claude Code's Agent calls, Codex's
// spawned agents), each shown as one line, by its id: a count of its tool
// calls and the one it runs now, never lines of their own (issue 29).
// The zero value is ready.
type Helpers struct {
	calls map[string]int
}

// Call counts one more tool call of the helper on line, now being what
// it runs ("Bash: echo one"), and returns the line saying so.
func (h *Helpers) Call(line core.ResponseBlock, now string) core.ResponseBlock {
	if h.calls == nil {
		h.calls = map[string]int{}
	}
	h.calls[line.ID]++
	line.Status, line.Detail = core.ToolRunning, Plural(h.calls[line.ID], "tool call")+", now "+now
	return line
}

// Calls is how many tool calls the helper of line id made.
func (h *Helpers) Calls(id string) int { return h.calls[id] }

// Done returns the helper's line ended with status: how many tool calls
// it made, if any.
func (h *Helpers) Done(line core.ResponseBlock, status core.ToolStatus) core.ResponseBlock {
	line.Status, line.Detail = status, ""
	if n := h.calls[line.ID]; n > 0 {
		line.Detail = Plural(n, "tool call")
	}
	return line
}

package acp

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// MCPServer is the name the agent knows the bot's MCP server by.
const MCPServer = "jakebot"

// mcpServers is session/new's and session/load's mcpServers: the bot's
// own MCP server for the turn (issue 31) over streamable HTTP with the
// turn's bearer token, for an agent that announced it connects over HTTP.
// An agent that takes only stdio gets none (the server is HTTP only), and
// a warning says so once.
func (a *Client) mcpServers() []any {
	tools := a.turn.Tools
	switch {
	case tools == nil:
		return []any{}
	case !a.mcpHTTP:
		a.link.Logger().Warn(a.opts.Name + " does not announce MCP over HTTP (mcpCapabilities.http): its turns go without jake-bot's tools")
		return []any{}
	}
	headers := []any{map[string]any{"name": "Authorization", "value": "Bearer " + tools.Token}}
	var pairs []string
	for _, tool := range slices.Sorted(maps.Keys(a.opts.ToolNames)) {
		// Only the turn's tools: the server refuses a naming of another.
		if slices.Contains(tools.Tools, tool) {
			pairs = append(pairs, tool+"="+a.opts.ToolNames[tool])
		}
	}
	if pairs != nil {
		headers = append(headers, map[string]any{"name": core.ToolNamesHeader, "value": strings.Join(pairs, ",")})
	}
	return []any{map[string]any{"type": "http", "name": MCPServer, "url": tools.URL, "headers": headers}}
}

// mcpConfirmation is the option Gemini CLI offers only when it confirms a
// call of an MCP server's tool ("Allow all server tools for this
// session"): its own, which nothing the model writes sets.
const mcpConfirmation = "proceed_always_server"

// ownTool reports whether permission request req, for call c, is for one
// of the bot's tools given to the turn, which need no approval (they are
// its own, bounded by it). ACP does not name a call's MCP server, and a
// title is no proof: a shell call's title is its command, which the model
// writes. So it is decided by what the agent itself says of the call:
// Qwen Code names the tool mcp__jakebot__<tool> in _meta.toolName; Gemini
// CLI titles it "<tool> (jakebot MCP Server)", of kind other, and offers
// its MCP confirmation's option, which no other call has. A call that
// shows neither is asked about as any other.
func (a *Client) ownTool(c toolCall, req permission) bool {
	if a.turn.Tools == nil {
		return false
	}
	mcp := c.Kind == "other" && slices.ContainsFunc(req.Options, func(o permissionOption) bool { return o.ID == mcpConfirmation })
	return slices.ContainsFunc(a.turn.Tools.Tools, func(tool string) bool {
		tool = cmp.Or(a.opts.ToolNames[tool], tool)
		return mcp && strings.TrimSpace(c.Title) == tool+" ("+MCPServer+" MCP Server)" ||
			c.Meta.ToolName == "mcp__"+MCPServer+"__"+tool
	})
}

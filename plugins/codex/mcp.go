package codex

import (
	"strconv"

	"github.com/jake-bot/jake-bot/core"
)

// mcpArgs tells Codex about the bot's MCP server for the turn (issue 31):
// streamable HTTP with the turn's bearer token, as -c overrides of its
// mcp_servers table (TOML values). Nothing without tools.
func mcpArgs(tools *core.ToolAccess) []string {
	if tools == nil {
		return nil
	}
	return []string{
		"-c", "mcp_servers.jakebot.url=" + strconv.Quote(tools.URL),
		"-c", "mcp_servers.jakebot.http_headers={Authorization=" + strconv.Quote("Bearer "+tools.Token) + "}",
		// The tools are the bot's own, bounded by it: no approval.
		"-c", `mcp_servers.jakebot.default_tools_approval_mode="approve"`,
	}
}

package codex

import (
	"strconv"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// mcpArgs tells Codex about the bot's MCP server for the turn (issue 31):
// streamable HTTP with the turn's bearer token, as -c overrides of its
// mcp_servers table (TOML values). Nothing without tools. Codex reads the
// token from the environment (bearer_token_env_var), where the engine puts
// it (cliproc.ToolTokenEnv): on the command line every user of the
// machine would see it.
func mcpArgs(tools *core.ToolAccess) []string {
	if tools == nil {
		return nil
	}
	return []string{
		"-c", "mcp_servers.jakebot.url=" + strconv.Quote(tools.URL),
		"-c", "mcp_servers.jakebot.bearer_token_env_var=" + strconv.Quote(cliproc.ToolTokenEnv),
		// The tools are the bot's own, bounded by it: no approval.
		"-c", `mcp_servers.jakebot.default_tools_approval_mode="approve"`,
		// Its commands inherit Codex's environment (its default
		// excludes of *TOKEN* are off): they get the variable blank.
		"-c", "shell_environment_policy.set." + cliproc.ToolTokenEnv + `=""`,
	}
}

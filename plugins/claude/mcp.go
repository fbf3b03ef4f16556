package claude

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// mcpServer is the name Claude Code knows the bot's MCP server by: its
// tools are mcp__jakebot__<tool>.
const mcpServer = "jakebot"

// mcpArgs tells Claude Code about the bot's MCP server for the turn
// (issue 31), over streamable HTTP with the turn's bearer token, and lets
// its tools run without a question: they are the bot's own, bounded by
// it. Nothing without tools. The token stays off the command line: Claude
// Code expands ${VAR} in a header from its environment, where the engine
// puts it (cliproc.ToolTokenEnv).
func mcpArgs(tools *core.ToolAccess) []string {
	if tools == nil {
		return nil
	}
	type server struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	cfg, _ := json.Marshal(map[string]map[string]server{"mcpServers": {mcpServer: {
		Type: "http", URL: tools.URL, Headers: map[string]string{"Authorization": "Bearer ${" + cliproc.ToolTokenEnv + "}"}}}})
	names := make([]string, len(tools.Tools))
	for i, t := range tools.Tools {
		names[i] = "mcp__" + mcpServer + "__" + t
	}
	// --mcp-config takes several values: the flag after it ends them.
	return []string{"--mcp-config", string(cfg), "--allowedTools", strings.Join(names, ",")}
}

// mcpFailed warns of the MCP servers the CLI could not connect to: the
// agent goes without their tools (the bot's own, jakebot, among them), and
// would otherwise only say so if asked.
func (p *Parser) mcpFailed(l *line) {
	var failed []string
	for _, s := range l.MCPServers {
		if s.Status == "failed" {
			failed = append(failed, s.Name)
		}
	}
	if len(failed) == 0 {
		return
	}
	p.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning,
		Text: fmt.Sprintf("MCP server %s failed to connect: the agent goes without its tools this turn.", strings.Join(failed, ", "))}))
}

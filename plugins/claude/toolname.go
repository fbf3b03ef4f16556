package claude

import (
	"encoding/json"
	"strings"

	"github.com/jake-bot/jake-bot/plugins/internal/display"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// ToolName cleans a tool's name for display. MCP tools are named
// mcp__<server>__<tool>; they become "Server · Tool" in title case, so
// mcp__process-manager__restart_process reads Process Manager · Restart
// Process. Built-in tools (Bash, Read) keep their names.
func ToolName(name string) string {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return name
	}
	server, tool, found := strings.Cut(rest, "__")
	if !found {
		return display.Title(rest)
	}
	return display.Title(server) + " · " + display.Title(tool)
}

// argKeys are the input fields that best summarise a tool call, by tool.
var argKeys = map[string][]string{
	"Bash":         {"command"},
	"Read":         {"file_path"},
	"Write":        {"file_path"},
	"Edit":         {"file_path"},
	"MultiEdit":    {"file_path"},
	"NotebookEdit": {"notebook_path"},
	"Glob":         {"pattern"},
	"Grep":         {"pattern"},
	"WebFetch":     {"url"},
	"WebSearch":    {"query"},
	"Task":         {"description"},
	"Agent":        {"description"},
	"Skill":        {"skill"},
}

// toolArg returns a short argument for a tool call: the field that says
// most about it, else the first string field.
func toolArg(name string, input json.RawMessage) string {
	strs := map[string]string{}
	todos := -1
	for o := jsonscan.NewObject(input); o.Next(); {
		k, v := string(o.Key()), o.Value()
		if str, ok := jsonscan.String(v); ok {
			strs[k] = str
		} else if k == "todos" {
			todos = 0
			for range jsonscan.Elements(v) {
				todos++
			}
		}
	}
	for _, k := range argKeys[name] {
		if s, ok := strs[k]; ok {
			return s
		}
	}
	if name == "TodoWrite" && todos >= 0 {
		return display.Plural(todos, "item")
	}
	for _, k := range []string{"command", "file_path", "path", "pattern", "query", "url", "description", "prompt"} {
		if s, ok := strs[k]; ok {
			return s
		}
	}
	return ""
}

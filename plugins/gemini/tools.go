package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jake-bot/jake-bot/plugins/internal/display"
)

// toolNames are display names for the CLI's built-in tools.
var toolNames = map[string]string{
	"run_shell_command":   "Shell",
	"write_file":          "Write",
	"replace":             "Edit",
	"read_file":           "Read",
	"read_many_files":     "Read",
	"list_directory":      "List",
	"glob":                "Glob",
	"grep_search":         "Grep",
	"search_file_content": "Grep",
	"google_web_search":   "Web Search",
	"web_fetch":           "Fetch",
	"save_memory":         "Memory",
}

// ToolName returns a tool's display name: a built-in's short name, else
// the identifier made readable ("update_topic" → "Update Topic").
func ToolName(name string) string {
	if s, ok := toolNames[name]; ok {
		return s
	}
	return display.Title(name)
}

// argKeys are the parameters that best describe a call, in order.
var argKeys = []string{"command", "file_path", "absolute_path", "dir_path", "path", "pattern", "query", "url", "prompt", "fact", "paths", "description"}

// toolArg is a call's short argument: its most telling parameter, else
// the parameters as compact JSON.
func toolArg(raw []byte) string {
	var params map[string]any
	if json.Unmarshal(raw, &params) != nil || len(params) == 0 {
		return ""
	}
	for _, k := range argKeys {
		switch v := params[k].(type) {
		case string:
			if v != "" {
				return v
			}
		case []any:
			parts := make([]string, 0, len(v))
			for _, e := range v {
				parts = append(parts, fmt.Sprint(e))
			}
			return strings.Join(parts, ", ")
		}
	}
	b, _ := json.Marshal(params)
	return string(b)
}

// todos renders write_todos' list on one line: "Todos 1/2: ☑ A · ◐ B".
func todos(raw []byte) string {
	var params struct {
		Todos []struct {
			Description string `json:"description"`
			Status      string `json:"status"`
		} `json:"todos"`
	}
	if json.Unmarshal(raw, &params) != nil || len(params.Todos) == 0 {
		return ""
	}
	done := 0
	parts := make([]string, len(params.Todos))
	for i, t := range params.Todos {
		box := "☐"
		switch t.Status {
		case "completed":
			box = "☑"
			done++
		case "in_progress":
			box = "◐"
		case "cancelled":
			box = "☒"
		}
		parts[i] = box + " " + strings.TrimSpace(t.Description)
	}
	return fmt.Sprintf("Todos %d/%d: %s", done, len(params.Todos), strings.Join(parts, " · "))
}

// apiMessage turns "[API Error: {"error":{"code":400,"message":"…",
// "status":"INVALID_ARGUMENT"}}]" into "API error 400 (INVALID_ARGUMENT):
// …"; other messages are kept.
func apiMessage(msg string) string {
	e, ok := display.ParseAPIError(msg)
	switch {
	case !ok:
		return msg
	case e.Code != 0 && e.Status != "":
		return fmt.Sprintf("API error %d (%s): %s", e.Code, e.Status, e.Message)
	case e.Code != 0:
		return fmt.Sprintf("API error %d: %s", e.Code, e.Message)
	}
	return "API error: " + e.Message
}

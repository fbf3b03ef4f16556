package codex

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
)

// toolStatus maps an item's status to a tool line's. Items without one are
// running until completed.
func toolStatus(status string, completed bool) core.ToolStatus {
	switch status {
	case "failed", "declined":
		return core.ToolFailed
	case "completed":
		return core.ToolDone
	}
	if completed {
		return core.ToolDone
	}
	return core.ToolRunning
}

// commandBlock is a shell command's tool line: the command, then its exit
// code and the last lines of its output.
func commandBlock(it *item) core.ResponseBlock {
	b := core.ResponseBlock{Kind: core.BlockToolUse, ID: it.ID, Tool: "Shell", Text: shellCommand(it.Command),
		Status: toolStatus(it.Status, false)}
	switch {
	case it.Status == "declined":
		b.Detail = "declined"
	case it.ExitCode != nil:
		if *it.ExitCode != 0 {
			b.Status = core.ToolFailed
		}
		b.Detail = fmt.Sprintf("exit %d", *it.ExitCode)
		if out := display.LastLines(it.AggregatedOutput, 3); out != "" {
			b.Detail += ": " + out
		}
	}
	return b
}

// shellCommand strips the `/bin/bash -lc '…'` wrapper Codex puts around
// every command, so the line shows what the model asked for.
func shellCommand(cmd string) string {
	for _, flag := range []string{" -lc ", " -c "} {
		shell, rest, ok := strings.Cut(cmd, flag)
		if !ok || strings.ContainsAny(shell, " '\"") || !isShell(shell) {
			continue
		}
		if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' {
			return strings.ReplaceAll(rest[1:len(rest)-1], `'\''`, `'`)
		}
		return rest
	}
	return cmd
}

func isShell(path string) bool {
	switch path[strings.LastIndexByte(path, '/')+1:] {
	case "bash", "zsh", "sh", "dash", "fish":
		return true
	}
	return false
}

func mcpBlock(it *item) core.ResponseBlock {
	b := core.ResponseBlock{Kind: core.BlockToolUse, ID: it.ID, Tool: display.Title(it.Server) + " · " + display.Title(it.Tool),
		Text: shortJSON(it.Arguments), Status: toolStatus(it.Status, false)}
	switch {
	case it.Error != nil && it.Error.Message != "":
		b.Status, b.Detail = core.ToolFailed, it.Error.Message
	case it.Result != nil:
		b.Detail = strings.Join(it.Result, " ")
	}
	return b
}

// shortJSON renders tool arguments compactly: the value alone when there
// is one, key=value pairs otherwise.
func shortJSON(raw []byte) string {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil || len(args) == 0 {
		return ""
	}
	if len(args) == 1 {
		for _, v := range args {
			if s, ok := v.(string); ok {
				return s
			}
		}
	}
	b, _ := json.Marshal(args)
	return string(b)
}

func webQuery(it *item) string {
	if it.Query != "" {
		return it.Query
	}
	if it.ActionQuery != "" {
		return it.ActionQuery
	}
	return it.ActionURL
}

// checklist renders a todo list on one line: "Plan 1/3: ☑ Read · ☐ Fix".
func checklist(items []todo) string {
	done := 0
	parts := make([]string, len(items))
	for i, t := range items {
		box := "☐"
		if t.Completed {
			box = "☑"
			done++
		}
		parts[i] = box + " " + strings.TrimSpace(t.Text)
	}
	return fmt.Sprintf("Plan %d/%d: %s", done, len(items), strings.Join(parts, " · "))
}

// reasoningLine is the first line of a reasoning summary, without the bold
// markers Codex wraps its headings in.
func reasoningLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.ReplaceAll(line, "**", ""))
		if line != "" {
			return core.Shorten(line, 200)
		}
	}
	return ""
}

// apiMessage digs the message out of an API error body that Codex passes
// on as a string, such as {"error":{"message":"…","type":"…"}}.
func apiMessage(msg string) string {
	e, ok := display.ParseAPIError(msg)
	if !ok {
		return msg
	}
	out := e.Before + " " + e.Message
	if e.Type != "" {
		out += " (" + e.Type + ")"
	}
	return strings.TrimSpace(out + " " + e.After)
}

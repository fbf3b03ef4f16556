package claude_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var capture = flag.Bool("capture", false, "run the pinned claude against the fake model and rewrite testdata/claude/control/*.jsonl at the repository root")

// controlCases are the control-protocol sessions (what Claude Code writes
// with --permission-prompt-tool stdio) the golden tests replay.
var controlCases = []plugintest.SessionCase{
	{Name: "approval", Mode: "default", Replies: []plugintest.Reply{
		{Text: []string{"Creating it."}, Tool: shell("echo made > made.txt")},
		{Text: []string{"Made."}},
	}},
	{Name: "denied", Mode: "default", Answer: core.Answer{Decision: core.Deny, Reason: "not here"}, Replies: []plugintest.Reply{
		{Tool: shell("rm -rf build")},
		{Text: []string{"Kept it."}},
	}},
	{Name: "question", Answer: core.Answer{Decision: core.Allow, Choice: "SQLite"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "AskUserQuestion", Input: map[string]any{"questions": []any{
			map[string]any{"question": "Which database?", "header": "DB", "multiSelect": false, "options": []any{
				map[string]any{"label": "Postgres", "description": "for the big data"},
				map[string]any{"label": "SQLite", "description": "one file"}}}}}}},
		{Text: []string{"SQLite it is."}},
	}},
	{Name: "plan", Mode: "plan", Answer: core.Answer{Decision: core.Allow, Choice: "Approve plan"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "ExitPlanMode", Input: map[string]any{"plan": "1. Create notes.txt\n2. Say so"}}},
		{Text: []string{"Starting."}},
	}},
	// A background command ends after the turn's result: the CLI writes
	// one more turn, re-invoked by its notification.
	{Name: "background", Mode: "default", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "Bash", Input: map[string]any{"command": "sleep 2; echo bgdone",
			"description": "Slow background job", "run_in_background": true}}},
		{Text: []string{"It runs in the background."}},
		{Text: []string{"The background job finished: bgdone."}},
	}},
	// The task tools (on with CLAUDE_CODE_ENABLE_TODO_TOOLS): the plan.
	{Name: "tasks", Mode: "default", Env: []string{"CLAUDE_CODE_ENABLE_TODO_TOOLS=1"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{ID: "toolu_c1", Name: "TaskCreate", Input: map[string]any{"subject": "Read the code", "description": "Read parse.go"}}},
		{Tool: &plugintest.ToolCall{ID: "toolu_c2", Name: "TaskCreate", Input: map[string]any{"subject": "Write the fix", "description": "Fix the parser"}}},
		{Tool: &plugintest.ToolCall{ID: "toolu_u1", Name: "TaskUpdate", Input: map[string]any{"taskId": "1", "status": "completed"}}},
		{Tool: &plugintest.ToolCall{ID: "toolu_u2", Name: "TaskUpdate", Input: map[string]any{"taskId": "2", "status": "in_progress"}}},
		{Text: []string{"Working on it."}},
	}},
	// A foreground subagent whose two commands are asked about: one line.
	{Name: "subagent", Mode: "default", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{ID: "toolu_agent1", Name: "Agent", Input: map[string]any{
			"description": "List the files", "prompt": "List the files in the workdir and report.",
			"subagent_type": "general-purpose", "run_in_background": false}}},
		{Tool: &plugintest.ToolCall{ID: "toolu_sub1", Name: "Bash", Input: map[string]any{"command": "echo one", "description": "One"}}},
		{Tool: &plugintest.ToolCall{ID: "toolu_sub2", Name: "Bash", Input: map[string]any{"command": "echo two", "description": "Two"}}},
		{Text: []string{"The workdir is empty."}},
		{Text: []string{"The helper says it is empty."}},
	}},
	{Name: "interrupt", Interrupt: true, Replies: []plugintest.Reply{
		{Text: []string{"Thinking hard"}},
	}},
}

// TestCaptureControl rewrites the recorded control-protocol sessions from
// the real CLI: go test ./plugins/claude -run TestCaptureControl -capture.
func TestCaptureControl(t *testing.T) {
	plugintest.RecordSessions(t, *capture, "claude", "control", controlCases, func(t *testing.T, bin string, c plugintest.SessionCase) (core.Plugin, plugintest.Model) {
		model, home := plugintest.NewAnthropic(t, c.Replies...), plugintest.Home(t)
		return claude.New(claude.Config{Settings: cliproc.Settings{Bin: bin, Env: append(plugintest.ClaudeEnv(t, model, home), c.Env...)},
			ConfigDir: filepath.Join(home, ".claude")}, nil), model
	})
}

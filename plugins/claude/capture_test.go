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
	{Name: "interrupt", Interrupt: true, Replies: []plugintest.Reply{
		{Text: []string{"Thinking hard"}},
	}},
}

// TestCaptureControl rewrites the recorded control-protocol sessions from
// the real CLI: go test ./plugins/claude -run TestCaptureControl -capture.
func TestCaptureControl(t *testing.T) {
	plugintest.RecordSessions(t, *capture, "claude", "control", controlCases, func(t *testing.T, bin string, replies []plugintest.Reply) (core.Plugin, plugintest.Model) {
		model, home := plugintest.NewAnthropic(t, replies...), plugintest.Home(t)
		return claude.New(claude.Config{Settings: cliproc.Settings{Bin: bin, Env: plugintest.ClaudeEnv(t, model, home)},
			ConfigDir: filepath.Join(home, ".claude")}, nil), model
	})
}

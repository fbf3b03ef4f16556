package claude_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// The agent's task list (TaskCreate and TaskUpdate, on in the pinned CLI
// with CLAUDE_CODE_ENABLE_TODO_TOOLS) is the reply's plan, one checklist
// updated in place, not a run of tool lines.
func TestTaskToolsAreThePlan(t *testing.T) {
	t.Parallel()
	call := func(id, name string, input map[string]any) plugintest.Reply {
		return plugintest.Reply{Tool: &plugintest.ToolCall{ID: id, Name: name, Input: input}}
	}
	bin := plugintest.CLIPath(t, "claude")
	model := plugintest.NewAnthropic(t,
		call("toolu_c1", "TaskCreate", map[string]any{"subject": "Read the code", "description": "Read parse.go"}),
		call("toolu_c2", "TaskCreate", map[string]any{"subject": "Write the fix", "description": "Fix the parser"}),
		call("toolu_u1", "TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}),
		call("toolu_u2", "TaskUpdate", map[string]any{"taskId": "2", "status": "in_progress"}),
		plugintest.Reply{Text: []string{"Working on it."}})
	f := plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		env := append(plugintest.ClaudeEnv(t, model, home), mark, "CLAUDE_CODE_ENABLE_TODO_TOOLS=1")
		return claude.New(claude.Config{PermissionMode: "default", ConfigDir: filepath.Join(home, ".claude"),
			Settings: cliproc.Settings{Bin: bin, Env: env}}, nil)
	})
	tr := f.Run(context.Background(), "plan the fix", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	plans := tr.Blocks(core.BlockPlan)
	if len(plans) != 4 {
		t.Fatalf("plan blocks %+v, want one per call", plans)
	}
	const want = "📋 Plan: 1 of 2 done\n☑ Read the code\n▶ Write the fix"
	if last := plans[len(plans)-1]; last.Text != want || last.ID != plans[0].ID {
		t.Errorf("last plan %+v, want %q replacing the first", last, want)
	}
	for _, b := range tr.Blocks(core.BlockToolUse) {
		t.Errorf("a task tool shown as a tool line: %+v", b)
	}
}

// A turn reports how full the model's context window is: the main
// agent's last request against its model's window.
func TestContextFill(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Hi."}})
	tr := f.Run(context.Background(), "hello", "")
	if tr.Err != nil || tr.Result.ContextWindow <= 0 || tr.Result.ContextTokens <= 0 || tr.Result.ContextPercent() < 0 {
		t.Errorf("Run = %+v, %v; want the context filled and its window", tr.Result, tr.Err)
	}
}

// A subagent (the Agent tool) is one line: its calls are counted there,
// with the one it runs now, never lines of their own.
func TestSubagentIsOneLine(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, []string{"--allowedTools", "Bash"},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_agent1", Name: "Agent", Input: map[string]any{
			"description": "List the files", "prompt": "List the files in the workdir and report.",
			"subagent_type": "general-purpose", "run_in_background": false}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_sub1", Name: "Bash", Input: map[string]any{"command": "echo one", "description": "One"}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_sub2", Name: "Bash", Input: map[string]any{"command": "echo two", "description": "Two"}}},
		plugintest.Reply{Text: []string{"The workdir is empty."}},
		plugintest.Reply{Text: []string{"The helper says it is empty."}})
	tr := f.Run(context.Background(), "ask a helper", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	var details []string
	for _, b := range tr.Blocks(core.BlockToolUse) {
		if b.ID != "toolu_agent1" {
			t.Errorf("a line of its own: %+v", b)
		}
		details = append(details, string(b.Status)+" "+b.Detail)
	}
	want := []string{"running ", "running 1 tool call, now Bash: echo one", "running 2 tool calls, now Bash: echo two", "done 2 tool calls"}
	if !slices.Equal(details, want) {
		t.Errorf("the helper's line went %q, want %q", details, want)
	}
}

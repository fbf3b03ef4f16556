package claude_test

import (
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// noSuchTool is what Claude Code answers a call of a tool the read-only
// turn does not offer.
const noSuchTool = "is disabled for this session, in subagents as well as here."

// readOnlyWrites are the writes the model attempts in the suite's
// read-only turns: each tool that writes, and a shell command.
var readOnlyWrites = []plugintest.Write{
	{Name: "Write", Creates: true, Refusal: "No such tool available: Write. Write " + noSuchTool, Call: func(path string) *plugintest.ToolCall {
		return &plugintest.ToolCall{Name: "Write", Input: map[string]any{"file_path": path, "content": "changed\n"}}
	}},
	{Name: "Edit", Refusal: "No such tool available: Edit. Edit " + noSuchTool, Call: func(path string) *plugintest.ToolCall {
		return &plugintest.ToolCall{Name: "Edit", Input: map[string]any{"file_path": path, "old_string": "original", "new_string": "changed"}}
	}},
	{Name: "Bash", Creates: true, Refusal: "No such tool available: Bash. Bash " + noSuchTool, Call: func(path string) *plugintest.ToolCall {
		return shell("echo changed > " + path)
	}},
	{Name: "ExitPlanMode", Refusal: "No such tool available: ExitPlanMode. ExitPlanMode " + noSuchTool, Call: func(string) *plugintest.ToolCall {
		return &plugintest.ToolCall{Name: "ExitPlanMode", Input: map[string]any{"plan": "Change the file."}}
	}},
}

// A read-only turn runs in plan mode whatever the conversation's /mode,
// with only the reading tools, and without CLAUDE_ARGS' bypass.
func TestReadOnlyArgs(t *testing.T) {
	t.Parallel()
	p := claude.New(claude.Config{PermissionMode: "acceptEdits",
		Settings: cliproc.Settings{Args: []string{"--dangerously-skip-permissions", "--max-turns", "3"}}}, nil)
	for _, tc := range []struct {
		name string
		turn core.Turn
		want []string
	}{
		{"unasked", core.Turn{ReadOnly: true, Mode: "bypassPermissions"}, []string{"--max-turns", "3",
			"--permission-mode", "plan", "--tools", "Read,Grep,Glob",
			"--disallowedTools", "Bash,PowerShell,Write,Edit,MultiEdit,NotebookEdit,ExitPlanMode,EnterWorktree"}},
		{"asks", core.Turn{ReadOnly: true, Ask: true}, []string{"--permission-prompt-tool", "stdio", "--max-turns", "3",
			"--permission-mode", "plan", "--tools", "Read,Grep,Glob,AskUserQuestion",
			"--disallowedTools", "Bash,PowerShell,Write,Edit,MultiEdit,NotebookEdit,ExitPlanMode,EnterWorktree"}},
		{"writes", core.Turn{Mode: "bypassPermissions"}, []string{"--permission-mode", "bypassPermissions",
			"--dangerously-skip-permissions", "--max-turns", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := p.Args(tc.turn)[8:]
			if !slices.Equal(got, tc.want) {
				t.Errorf("Args = %q\nwant   %q", got, tc.want)
			}
		})
	}
	if means, ok := p.ReadOnlyMeans(); !ok || means == "" {
		t.Errorf("ReadOnlyMeans = %q, %v; want plan mode", means, ok)
	}
}

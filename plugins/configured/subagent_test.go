package configured_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// A subagent of an ACP agent (Qwen Code's agent tool, in the foreground)
// is its call's one line, counting its tool calls, never lines of their
// own, and its answer is not the turn's: the updates that name a parent
// call in _meta are the subagent's.
func TestACPSubagentIsOneLine(t *testing.T) {
	t.Parallel()
	f := newQwenFixture(t, []string{"--approval-mode", "yolo"},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "call_agent1", Name: "agent", Input: map[string]any{"description": "List the files",
			"prompt": "List the files in the workdir and report.", "subagent_type": "general-purpose", "run_in_background": false}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "call_sub1", Name: "run_shell_command", Input: map[string]any{"command": "echo one", "is_background": false}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "call_sub2", Name: "run_shell_command", Input: map[string]any{"command": "echo two", "is_background": false}}},
		plugintest.Reply{Text: []string{"The workdir is empty."}},
		plugintest.Reply{Text: []string{"The helper says it is empty."}})
	tr := f.Run(context.Background(), "ask a helper", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	if text := tr.Text(); text != "The helper says it is empty." {
		t.Errorf("text %q, want the turn's own answer only", text)
	}
	var details []string
	for _, b := range tr.Blocks(core.BlockToolUse) {
		if b.ID != "call_agent1" {
			t.Errorf("a line of its own: %+v", b)
		}
		details = append(details, string(b.Status)+" "+b.Detail)
	}
	// The agent's own updates of the call (its start, the subagent's
	// session ready) repeat the line.
	details = slices.Compact(details)
	want := []string{"running ", "running 1 tool call, now Shell: echo one", "running 2 tool calls, now Shell: echo two", "done 2 tool calls"}
	if !slices.Equal(details, want) {
		t.Errorf("the subagent's line went %q, want %q", details, want)
	}
}

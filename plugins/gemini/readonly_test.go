package gemini_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// readOnlyWrites are the writes the model attempts in the suite's
// read-only turns: each tool that writes, a shell command, and leaving
// plan mode.
var readOnlyWrites = []plugintest.Write{
	{Name: "write_file", Creates: true, Refusal: "Access denied: plan path", Call: func(path string) *plugintest.ToolCall {
		return &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": path, "content": "changed\n"}}
	}},
	{Name: "replace", Refusal: "Access denied: plan path", Call: func(path string) *plugintest.ToolCall {
		return &plugintest.ToolCall{Name: "replace", Input: map[string]any{"file_path": path, "old_string": "original", "new_string": "changed", "instruction": "change it"}}
	}},
	{Name: "shell", Creates: true, Refusal: `Tool \"run_shell_command\" not found in registry.`, Call: func(path string) *plugintest.ToolCall {
		return shell("echo changed > " + path)
	}},
}

// A read-only turn runs in plan mode whatever the conversation's /mode
// and GEMINI_ARGS say, one-shot as over ACP.
func TestReadOnlyArgs(t *testing.T) {
	t.Parallel()
	p := gemini.New(gemini.Config{ApprovalMode: "yolo", Settings: cliproc.Settings{Args: []string{"-y", "--approval-mode", "yolo", "--debug"}}}, nil)
	for _, tc := range []struct {
		name string
		turn core.Turn
		want []string
	}{
		{"read-only", core.Turn{ReadOnly: true, Mode: "yolo", Prompt: "p"}, []string{"--output-format", "stream-json", "--debug", "--approval-mode", "plan", "--prompt=p"}},
		{"may write", core.Turn{Mode: "auto_edit", Prompt: "p"}, []string{"--output-format", "stream-json", "--approval-mode", "auto_edit", "-y", "--approval-mode", "yolo", "--debug", "--prompt=p"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Args(tc.turn); !slices.Equal(got, tc.want) {
				t.Errorf("Args = %q\nwant   %q", got, tc.want)
			}
		})
	}
	if means, ok := p.ReadOnlyMeans(); !ok || means == "" {
		t.Errorf("ReadOnlyMeans = %q, %v; want plan mode", means, ok)
	}
}

// Plan mode asks before exit_plan_mode, which, approved, switches the
// session to the default mode, whose writes are only asked about: a
// read-only turn refuses it without asking the chat, and the write after
// it finds plan mode still on.
func TestReadOnlyTurnStaysInPlanMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": "plan.md", "content": "The plan.\n"}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "exit_plan_mode", Input: map[string]any{"plan_filename": "plan.md"}}})
	path := filepath.Join(f.Workdir, plugintest.ReadOnlyFile)
	f.Model.Push(plugintest.Reply{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": path, "content": "changed\n"}}},
		plugintest.Reply{Text: []string{"Refused."}})
	turn := f.Turn("plan, then write", "", true)
	turn.ReadOnly = true
	tr := plugintest.RunAnswering(context.Background(), t, f.Plugin, turn, core.Answer{Decision: core.Allow})
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v; want a clean end", tr.Result, tr.Err)
	}
	if qs := tr.Questions(); len(qs) != 0 {
		t.Errorf("questions %+v, want none", qs)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s was written", path)
	}
	reqs := f.Model.Requests()
	outs := strings.Join(reqs[len(reqs)-1].ToolOutputs(), "\n")
	if strings.Contains(outs, "Plan approved") || !strings.Contains(outs, "Access denied: plan path") {
		t.Errorf("the model was told %q, want the plan not approved and the write refused", outs)
	}
}

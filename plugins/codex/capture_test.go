package codex

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var capture = flag.Bool("capture", false, "run the pinned codex against the fake model and rewrite testdata/codex/*.jsonl at the repository root")

// captureOpts are what a capture case may change of Codex's run.
type captureOpts struct {
	// provider replaces the fake provider's retry settings.
	provider string
	// model defaults to one whose metadata Codex knows.
	model string
}

// captureCases are the streams the golden tests replay. Each case's last
// turn is written; earlier turns set up a session to resume.
var captureCases = []plugintest.StreamCase[captureOpts]{
	{Name: "text", Turns: []plugintest.StreamTurn{{Prompt: "say hello", Replies: []plugintest.Reply{
		{Text: []string{"Hello", " from", " the fake", " model."}},
	}}}},
	{Name: "warning", Opts: captureOpts{model: "gpt-5"}, Turns: []plugintest.StreamTurn{{Prompt: "say hello", Replies: []plugintest.Reply{
		{Text: []string{"Hello despite the warning."}},
	}}}},
	{Name: "reasoning", Turns: []plugintest.StreamTurn{{Prompt: "think first", Replies: []plugintest.Reply{
		{Thinking: "**Checking the workdir**\n\nNothing to look at yet.", Text: []string{"Thought it over."}},
	}}}},
	{Name: "resume", Turns: []plugintest.StreamTurn{
		{Prompt: "remember the number 42", Replies: []plugintest.Reply{{Text: []string{"I will remember 42."}}}},
		{Prompt: "which number?", Replies: []plugintest.Reply{{Text: []string{"The number", " was 42."}}}},
	}},
	{Name: "shell", Turns: []plugintest.StreamTurn{{Prompt: "make a file", Replies: []plugintest.Reply{
		{Text: []string{"Creating ", "the file."}, Tool: &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "echo made > made.txt && ls"}}},
		{Text: []string{"Created made.txt."}},
	}}}},
	{Name: "shell_failed", Turns: []plugintest.StreamTurn{{Prompt: "list a missing dir", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "ls /nonexistent-dir"}}},
		{Text: []string{"That directory does not exist."}},
	}}}},
	{Name: "patch", Turns: []plugintest.StreamTurn{{Prompt: "add a file", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** Add File: hello.txt\n+hello\n+world\n*** End Patch\n"}}},
		{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n"}}},
		{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** Delete File: hello.txt\n*** End Patch\n"}}},
		{Text: []string{"Added, changed and removed hello.txt."}},
	}}}},
	{Name: "plan", Turns: []plugintest.StreamTurn{{Prompt: "plan it", Args: []string{"-c", "tools.update_plan.enabled=true"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "update_plan", Input: map[string]any{"plan": []any{
			map[string]any{"step": "Read the code", "status": "completed"},
			map[string]any{"step": "Write the fix", "status": "in_progress"},
			map[string]any{"step": "Run the tests", "status": "pending"},
		}}}},
		{Text: []string{"Plan made."}},
	}}}},
	{Name: "api_error", Turns: []plugintest.StreamTurn{{Prompt: "say hello", Replies: []plugintest.Reply{
		{Status: 400, Message: "The model `nope` does not exist."},
	}}}},
	{Name: "reconnect", Opts: captureOpts{provider: "request_max_retries=0,stream_max_retries=2"}, Turns: []plugintest.StreamTurn{{Prompt: "say hello", Replies: []plugintest.Reply{
		{Status: 500, Message: "boom"}, {Status: 500, Message: "boom"}, {Status: 500, Message: "boom"},
	}}}},
}

// TestCapture rewrites the recorded streams from the real CLI. It runs
// only with -capture: go test ./plugins/codex -run TestCapture -capture.
func TestCapture(t *testing.T) {
	plugintest.StreamRecorder[captureOpts]{CLI: "codex", Run: captureTurn, SessionEvent: "thread.started", SessionField: "thread_id",
		State: ".codex", Keep: keepHistory,
		Recorded: func(t *testing.T, c plugintest.StreamCase[captureOpts], home, dir, thread string) {
			if c.Name == "patch" {
				// The thread's rollout, where the diffs are.
				saveRollout(t, filepath.Join(home, ".codex"), thread, filepath.Join(plugintest.ModuleRoot(), "testdata", "codex", "rollouts", c.Name+".jsonl"), dir)
			}
		},
	}.Record(t, *capture, captureCases)
}

// captureTurn runs one turn of `codex exec` for a capture.
func captureTurn(t *testing.T, bin string, c plugintest.StreamCase[captureOpts], turn plugintest.StreamTurn, home, dir, thread string) []byte {
	o := plugintest.NewOpenAI(t, turn.Replies...)
	args := []string{"exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "-m", cmp.Or(c.Opts.model, "gpt-5.5")}
	args = append(args, plugintest.CodexArgs(o)...)
	if c.Opts.provider != "" {
		args = append(args, "-c", fmt.Sprintf(`model_providers.fake={name="fake",base_url=%q,wire_api="responses",%s}`, o.URL, c.Opts.provider))
	}
	args = append(args, turn.Args...)
	if thread != "" {
		args = append(args, "resume", thread)
	}
	return plugintest.RunCLI(t, bin, dir, plugintest.CodexEnv(t, home), append(args, turn.Prompt)...)
}

func keepHistory(rel string) bool { return strings.HasPrefix(rel, "sessions/") }

// saveRollout copies thread's rollout to out, with the workdir replaced by
// plugintest.RecordedWorkdir.
func saveRollout(t *testing.T, home, thread, out, workdir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*"+thread+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("rollouts of %s: %q", thread, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, bytes.ReplaceAll(data, []byte(workdir), []byte(plugintest.RecordedWorkdir)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// appServerCases are the `codex app-server` sessions the golden tests
// replay: one turn each, every question answered with allow.
var appServerCases = []plugintest.SessionCase{
	{Name: "approval", Replies: []plugintest.Reply{
		{Text: []string{"Creating ", "the file."}, Tool: &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "echo made > made.txt"}}},
		{Text: []string{"Done."}},
	}},
	{Name: "patch", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** Add File: hello.txt\n+hello\n+world\n*** End Patch\n"}}},
		{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n"}}},
		{Text: []string{"Added and changed hello.txt."}},
	}},
	// A spawned agent (multi_agent_v2) runs two commands while the turn
	// waits for it: its thread's notifications come on the connection.
	{Name: "subagent", Args: []string{"-c", "features.multi_agent_v2=true"}, Replies: subagentReplies},
	// update_plan, offered only with the flag, twice: each
	// turn/plan/updated replaces the reply's checklist.
	{Name: "plan", Args: []string{"-c", "tools.update_plan.enabled=true"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "update_plan", Input: map[string]any{"explanation": "Three steps", "plan": []any{
			map[string]any{"step": "Read the code", "status": "completed"},
			map[string]any{"step": "Write the fix", "status": "in_progress"},
			map[string]any{"step": "Run the tests", "status": "pending"},
		}}}},
		{Tool: &plugintest.ToolCall{Name: "update_plan", Input: map[string]any{"plan": []any{
			map[string]any{"step": "Read the code", "status": "completed"},
			map[string]any{"step": "Write the fix", "status": "completed"},
			map[string]any{"step": "Run the tests", "status": "in_progress"},
		}}}},
		{Text: []string{"Planned."}},
	}},
	// Three model responses: thread/tokenUsage/updated after each, the
	// turn's context being the last response's tokens against the
	// model's window, its in and out the thread's running sums.
	{Name: "context", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "echo one"}}},
		{Tool: &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "echo two"}}},
		{Text: []string{"Ran both."}},
	}},
}

// TestCaptureAppServer rewrites the recorded app-server sessions from the
// real CLI: go test ./plugins/codex -run TestCaptureAppServer -capture.
func TestCaptureAppServer(t *testing.T) {
	plugintest.RecordSessions(t, *capture, "codex", "appserver", appServerCases, func(t *testing.T, bin string, c plugintest.SessionCase) (core.Plugin, plugintest.Model) {
		model, home := plugintest.NewOpenAI(t, c.Replies...), plugintest.Home(t)
		return New(Config{Settings: cliproc.Settings{Bin: bin, Args: append(plugintest.CodexArgs(model), c.Args...), Model: "gpt-5.5",
			Env: plugintest.CodexEnv(t, home)},
			Home: filepath.Join(home, ".codex")}, nil), model
	})
}

// subagentReplies spawn an agent and wait for it in one response, so that
// the agent's three requests come before the turn's next.
var subagentReplies = []plugintest.Reply{
	{Tool: &plugintest.ToolCall{ID: "call_spawn", Name: "spawn_agent", Namespace: "collaboration",
		Input: map[string]any{"message": "List the files and report.", "task_name": "lister", "fork_turns": "none"}},
		Tools: []plugintest.ToolCall{{ID: "call_wait", Name: "wait_agent", Namespace: "collaboration", Input: map[string]any{"timeout_ms": 60000}}}},
	{Tool: &plugintest.ToolCall{ID: "call_sub1", Name: "exec_command", Input: map[string]any{"cmd": "echo one"}}},
	{Tool: &plugintest.ToolCall{ID: "call_sub2", Name: "exec_command", Input: map[string]any{"cmd": "echo two"}}},
	{Text: []string{"The workdir is empty."}},
	{Text: []string{"The helper says it is empty."}},
}

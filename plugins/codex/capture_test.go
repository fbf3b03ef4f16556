package codex

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// CaptureWorkdir stands for the capture's workdir in recorded streams.
const CaptureWorkdir = "/workdir"

var capture = flag.Bool("capture", false, "run the pinned codex against the fake model and rewrite testdata/codex/*.jsonl at the repository root")

// captureTurn is one `codex exec` run of a capture: its prompt, the fake
// model's replies, and extra arguments.
type captureTurn struct {
	prompt  string
	replies []plugintest.Reply
	args    []string
}

// captureCases are the streams the golden tests replay. Each case's last
// turn is written; earlier turns set up a session to resume.
var captureCases = []struct {
	name  string
	turns []captureTurn
	// provider replaces the fake provider's retry settings.
	provider string
	// model defaults to one whose metadata Codex knows.
	model string
}{
	{name: "text", turns: []captureTurn{{prompt: "say hello", replies: []plugintest.Reply{
		{Text: []string{"Hello", " from", " the fake", " model."}},
	}}}},
	{name: "warning", model: "gpt-5", turns: []captureTurn{{prompt: "say hello", replies: []plugintest.Reply{
		{Text: []string{"Hello despite the warning."}},
	}}}},
	{name: "reasoning", turns: []captureTurn{{prompt: "think first", replies: []plugintest.Reply{
		{Thinking: "**Checking the workdir**\n\nNothing to look at yet.", Text: []string{"Thought it over."}},
	}}}},
	{name: "resume", turns: []captureTurn{
		{prompt: "remember the number 42", replies: []plugintest.Reply{{Text: []string{"I will remember 42."}}}},
		{prompt: "which number?", replies: []plugintest.Reply{{Text: []string{"The number", " was 42."}}}},
	}},
	{name: "shell", turns: []captureTurn{{prompt: "make a file", replies: []plugintest.Reply{
		{Text: []string{"Creating ", "the file."}, Tool: &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "echo made > made.txt && ls"}}},
		{Text: []string{"Created made.txt."}},
	}}}},
	{name: "shell_failed", turns: []captureTurn{{prompt: "list a missing dir", replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "ls /nonexistent-dir"}}},
		{Text: []string{"That directory does not exist."}},
	}}}},
	{name: "patch", turns: []captureTurn{{prompt: "add a file", replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** Add File: hello.txt\n+hello\n+world\n*** End Patch\n"}}},
		{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n"}}},
		{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n*** Delete File: hello.txt\n*** End Patch\n"}}},
		{Text: []string{"Added, changed and removed hello.txt."}},
	}}}},
	{name: "plan", turns: []captureTurn{{prompt: "plan it", args: []string{"-c", "tools.update_plan.enabled=true"}, replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "update_plan", Input: map[string]any{"plan": []any{
			map[string]any{"step": "Read the code", "status": "completed"},
			map[string]any{"step": "Write the fix", "status": "in_progress"},
			map[string]any{"step": "Run the tests", "status": "pending"},
		}}}},
		{Text: []string{"Plan made."}},
	}}}},
	{name: "api_error", turns: []captureTurn{{prompt: "say hello", replies: []plugintest.Reply{
		{Status: 400, Message: "The model `nope` does not exist."},
	}}}},
	{name: "reconnect", provider: "request_max_retries=0,stream_max_retries=2", turns: []captureTurn{{prompt: "say hello", replies: []plugintest.Reply{
		{Status: 500, Message: "boom"}, {Status: 500, Message: "boom"}, {Status: 500, Message: "boom"},
	}}}},
}

// TestCapture rewrites the recorded streams from the real CLI. It runs
// only with -capture: go test ./plugins/codex -run TestCapture -capture.
func TestCapture(t *testing.T) {
	if !*capture {
		t.Skip("recapture with -capture")
	}
	bin := plugintest.CLIPath(t, "codex")
	outDir := filepath.Join(plugintest.ModuleRoot(), "testdata", "codex")
	for _, c := range captureCases {
		t.Run(c.name, func(t *testing.T) {
			home, dir := plugintest.Home(t), t.TempDir()
			env := plugintest.CodexEnv(t, home)
			var out []byte
			thread := ""
			for _, turn := range c.turns {
				o := plugintest.NewOpenAI(t, turn.replies...)
				model := c.model
				if model == "" {
					model = "gpt-5.5"
				}
				args := []string{"exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "-m", model}
				args = append(args, plugintest.CodexArgs(o)...)
				if c.provider != "" {
					args = append(args, "-c", fmt.Sprintf(`model_providers.fake={name="fake",base_url=%q,wire_api="responses",%s}`, o.URL, c.provider))
				}
				args = append(args, turn.args...)
				if thread != "" {
					args = append(args, "resume", thread)
				}
				out = plugintest.RunCLI(t, bin, dir, env, append(args, turn.prompt)...)
				thread = threadID(out)
			}
			// The workdir is a fresh temporary directory; a fixed name
			// keeps the goldens stable across recaptures.
			out = bytes.ReplaceAll(out, []byte(dir), []byte(CaptureWorkdir))
			if err := os.WriteFile(filepath.Join(outDir, c.name+".jsonl"), out, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.name == "resume" {
				// The CLI's own history of this session, for the
				// listing tests.
				plugintest.CopyHistory(t, filepath.Join(home, ".codex"), filepath.Join(outDir, "history", ".codex"), dir, CaptureWorkdir, keepHistory)
			}
			if c.name == "patch" {
				// The thread's rollout, where the diffs are.
				saveRollout(t, filepath.Join(home, ".codex"), thread, filepath.Join(outDir, "rollouts", c.name+".jsonl"), dir)
			}
		})
	}
}

func threadID(out []byte) string {
	for _, line := range bytes.Split(out, []byte("\n")) {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Type == "thread.started" {
			return ev.ThreadID
		}
	}
	return ""
}

func keepHistory(rel string) bool { return strings.HasPrefix(rel, "sessions/") }

// saveRollout copies thread's rollout to out, with the workdir replaced by
// CaptureWorkdir.
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
	if err := os.WriteFile(out, bytes.ReplaceAll(data, []byte(workdir), []byte(CaptureWorkdir)), 0o644); err != nil {
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
}

// TestCaptureAppServer rewrites the recorded app-server sessions from the
// real CLI: go test ./plugins/codex -run TestCaptureAppServer -capture.
func TestCaptureAppServer(t *testing.T) {
	plugintest.RecordSessions(t, *capture, "codex", "appserver", CaptureWorkdir, appServerCases, func(t *testing.T, bin string, replies []plugintest.Reply) (core.Plugin, plugintest.Model) {
		model, home := plugintest.NewOpenAI(t, replies...), plugintest.Home(t)
		return New(Config{Bin: bin, Args: plugintest.CodexArgs(model), Model: "gpt-5.5", Home: filepath.Join(home, ".codex"),
			Env: plugintest.CodexEnv(t, home)}, nil), model
	})
}

package gemini

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var capture = flag.Bool("capture", false, "run the pinned gemini against the fake model and rewrite testdata/gemini/*.jsonl at the repository root")

// captureOpts are what a capture case may change of the CLI's run.
type captureOpts struct {
	// settings, when set, replaces the test home's settings.json.
	settings string
}

// captureCases are the streams the golden tests replay. Each case's last
// turn is written; earlier turns set up a session to resume.
var captureCases = []plugintest.StreamCase[captureOpts]{
	{Name: "text", Turns: []plugintest.StreamTurn{{Prompt: "say hello", Replies: []plugintest.Reply{
		{Text: []string{"Hello", " from", " the fake", " model."}},
	}}}},
	{Name: "thinking", Turns: []plugintest.StreamTurn{{Prompt: "think first", Replies: []plugintest.Reply{
		{Thinking: "**Checking the workdir** Nothing to look at yet.", Text: []string{"Thought it over."}},
	}}}},
	{Name: "parallel", Turns: []plugintest.StreamTurn{{Prompt: "look around", Args: []string{"--approval-mode", "yolo"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "list_directory", Input: map[string]any{"dir_path": "."}},
			Tools: []plugintest.ToolCall{{Name: "write_todos", Input: map[string]any{"todos": []any{
				map[string]any{"description": "Look around", "status": "completed"},
				map[string]any{"description": "Report", "status": "in_progress"},
			}}}}},
		{Text: []string{"Looked."}},
	}}}},
	{Name: "resume", Turns: []plugintest.StreamTurn{
		{Prompt: "remember the number 42", Replies: []plugintest.Reply{{Text: []string{"I will remember 42."}}}},
		{Prompt: "which number?", Replies: []plugintest.Reply{{Text: []string{"The number", " was 42."}}}},
	}},
	{Name: "shell", Turns: []plugintest.StreamTurn{{Prompt: "make a file", Args: []string{"--approval-mode", "yolo"}, Replies: []plugintest.Reply{
		{Text: []string{"Creating the file."}, Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo made > made.txt && ls"}}},
		{Text: []string{"Created made.txt."}},
	}}}},
	{Name: "shell_failed", Turns: []plugintest.StreamTurn{{Prompt: "list a missing dir", Args: []string{"--approval-mode", "yolo"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "ls /nonexistent-dir"}}},
		{Text: []string{"That directory does not exist."}},
	}}}},
	{Name: "shell_denied", Turns: []plugintest.StreamTurn{{Prompt: "make a file", Args: []string{"--approval-mode", "auto_edit"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo made > made.txt"}}},
		{Text: []string{"I may not run commands."}},
	}}}},
	{Name: "write_file", Turns: []plugintest.StreamTurn{{Prompt: "add a file", Args: []string{"--approval-mode", "auto_edit"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": "hello.txt", "content": "hello\nworld\n"}}},
		{Text: []string{"Added hello.txt."}},
	}}}},
	{Name: "replace", Turns: []plugintest.StreamTurn{{Prompt: "add and edit a file", Args: []string{"--approval-mode", "auto_edit"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": "hello.txt", "content": "one\ntwo\nthree\n"}}},
		{Tool: &plugintest.ToolCall{Name: "replace", Input: map[string]any{"file_path": "hello.txt", "old_string": "two", "new_string": "TWO",
			"instruction": "Capitalise the second line."}}},
		{Text: []string{"Edited hello.txt."}},
	}}}},
	{Name: "turn_limit", Opts: captureOpts{settings: `{"security":{"auth":{"selectedType":"gemini-api-key"}},"model":{"maxSessionTurns":1}}`}, Turns: []plugintest.StreamTurn{{Prompt: "loop", Args: []string{"--approval-mode", "yolo"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo once"}}},
		{Text: []string{"Again."}, Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo twice"}}},
		{Text: []string{"Done."}},
	}}}},
	{Name: "api_error", Turns: []plugintest.StreamTurn{{Prompt: "say hello", Replies: []plugintest.Reply{
		{Status: 400, Message: "API key not valid. Please pass a valid API key."},
	}}}},
}

// TestCapture rewrites the recorded streams from the real CLI. It runs
// only with -capture: go test ./plugins/gemini -run TestCapture -capture.
func TestCapture(t *testing.T) {
	plugintest.StreamRecorder[captureOpts]{CLI: "gemini", Run: captureTurn, SessionEvent: "init", SessionField: "session_id",
		State: ".gemini", Keep: keepHistory}.Record(t, *capture, captureCases)
}

// captureTurn runs one turn of `gemini -p` for a capture.
func captureTurn(t *testing.T, bin string, c plugintest.StreamCase[captureOpts], turn plugintest.StreamTurn, home, dir, session string) []byte {
	g := plugintest.NewGemini(t, turn.Replies...)
	env := plugintest.GeminiEnv(t, g, home)
	if c.Opts.settings != "" {
		if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(c.Opts.settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"-p", turn.Prompt, "-o", "stream-json", "-m", "gemini-2.5-flash"}, turn.Args...)
	if session != "" {
		args = append(args, "--resume", session)
	}
	return plugintest.RunCLI(t, bin, dir, env, args...)
}

func keepHistory(rel string) bool {
	return rel == "projects.json" || strings.HasPrefix(rel, "tmp/") &&
		(strings.HasSuffix(rel, "/.project_root") || strings.Contains(rel, "/chats/"))
}

// acpCases are the `gemini --acp` sessions the golden tests replay: one
// turn each, every question answered with allow.
var acpCases = []plugintest.SessionCase{
	{Name: "approval", Replies: []plugintest.Reply{
		{Text: []string{"Creating ", "the file."}, Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo made > made.txt"}}},
		{Text: []string{"Done."}},
	}},
	{Name: "edits", Mode: "default", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": "hello.txt", "content": "one\ntwo\nthree\n"}}},
		{Tool: &plugintest.ToolCall{Name: "replace", Input: map[string]any{"file_path": "hello.txt", "old_string": "two", "new_string": "TWO",
			"instruction": "Capitalise the second line."}}},
		{Text: []string{"Edited hello.txt."}},
	}},
	// write_todos: the Gemini CLI's ACP agent asks before it and sends
	// it as a tool call without the list, not as a plan update
	// (plugins/LIVE-TURNS.md).
	{Name: "todos", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "write_todos", Input: map[string]any{"todos": []any{
			map[string]any{"description": "Read the code", "status": "completed"},
			map[string]any{"description": "Write the fix", "status": "in_progress"},
			map[string]any{"description": "Run the tests", "status": "pending"},
		}}}},
		{Text: []string{"Planned."}},
	}},
}

// TestCaptureACP rewrites the recorded ACP sessions from the real CLI:
// go test ./plugins/gemini -run TestCaptureACP -capture.
func TestCaptureACP(t *testing.T) {
	plugintest.RecordSessions(t, *capture, "gemini", "acp", acpCases, func(t *testing.T, bin string, c plugintest.SessionCase) (core.Plugin, plugintest.Model) {
		model, home := plugintest.NewGemini(t, c.Replies...), plugintest.Home(t)
		return New(Config{Settings: cliproc.Settings{Bin: bin, Model: "gemini-2.5-flash",
			Env: plugintest.GeminiEnv(t, model, home)},
			Home: home}, nil), model
	})
}

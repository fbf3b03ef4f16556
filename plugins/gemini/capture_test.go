package gemini

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// CaptureWorkdir stands for the capture's workdir in recorded streams.
const CaptureWorkdir = "/workdir"

var capture = flag.Bool("capture", false, "run the pinned gemini against the fake model and rewrite testdata/gemini/*.jsonl at the repository root")

// captureTurn is one `gemini -p` run of a capture: its prompt, the fake
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
	// settings, when set, replaces the test home's settings.json.
	settings string
}{
	{name: "text", turns: []captureTurn{{prompt: "say hello", replies: []plugintest.Reply{
		{Text: []string{"Hello", " from", " the fake", " model."}},
	}}}},
	{name: "thinking", turns: []captureTurn{{prompt: "think first", replies: []plugintest.Reply{
		{Thinking: "**Checking the workdir** Nothing to look at yet.", Text: []string{"Thought it over."}},
	}}}},
	{name: "parallel", turns: []captureTurn{{prompt: "look around", args: []string{"--approval-mode", "yolo"}, replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "list_directory", Input: map[string]any{"dir_path": "."}},
			Tools: []plugintest.ToolCall{{Name: "write_todos", Input: map[string]any{"todos": []any{
				map[string]any{"description": "Look around", "status": "completed"},
				map[string]any{"description": "Report", "status": "in_progress"},
			}}}}},
		{Text: []string{"Looked."}},
	}}}},
	{name: "resume", turns: []captureTurn{
		{prompt: "remember the number 42", replies: []plugintest.Reply{{Text: []string{"I will remember 42."}}}},
		{prompt: "which number?", replies: []plugintest.Reply{{Text: []string{"The number", " was 42."}}}},
	}},
	{name: "shell", turns: []captureTurn{{prompt: "make a file", args: []string{"--approval-mode", "yolo"}, replies: []plugintest.Reply{
		{Text: []string{"Creating the file."}, Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo made > made.txt && ls"}}},
		{Text: []string{"Created made.txt."}},
	}}}},
	{name: "shell_failed", turns: []captureTurn{{prompt: "list a missing dir", args: []string{"--approval-mode", "yolo"}, replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "ls /nonexistent-dir"}}},
		{Text: []string{"That directory does not exist."}},
	}}}},
	{name: "shell_denied", turns: []captureTurn{{prompt: "make a file", args: []string{"--approval-mode", "auto_edit"}, replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo made > made.txt"}}},
		{Text: []string{"I may not run commands."}},
	}}}},
	{name: "write_file", turns: []captureTurn{{prompt: "add a file", args: []string{"--approval-mode", "auto_edit"}, replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": "hello.txt", "content": "hello\nworld\n"}}},
		{Text: []string{"Added hello.txt."}},
	}}}},
	{name: "replace", turns: []captureTurn{{prompt: "add and edit a file", args: []string{"--approval-mode", "auto_edit"}, replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": "hello.txt", "content": "one\ntwo\nthree\n"}}},
		{Tool: &plugintest.ToolCall{Name: "replace", Input: map[string]any{"file_path": "hello.txt", "old_string": "two", "new_string": "TWO",
			"instruction": "Capitalise the second line."}}},
		{Text: []string{"Edited hello.txt."}},
	}}}},
	{name: "turn_limit", settings: `{"security":{"auth":{"selectedType":"gemini-api-key"}},"model":{"maxSessionTurns":1}}`, turns: []captureTurn{{prompt: "loop", args: []string{"--approval-mode", "yolo"}, replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo once"}}},
		{Text: []string{"Again."}, Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo twice"}}},
		{Text: []string{"Done."}},
	}}}},
	{name: "api_error", turns: []captureTurn{{prompt: "say hello", replies: []plugintest.Reply{
		{Status: 400, Message: "API key not valid. Please pass a valid API key."},
	}}}},
}

// TestCapture rewrites the recorded streams from the real CLI. It runs
// only with -capture: go test ./plugins/gemini -run TestCapture -capture.
func TestCapture(t *testing.T) {
	if !*capture {
		t.Skip("recapture with -capture")
	}
	bin := plugintest.CLIPath(t, "gemini")
	outDir := filepath.Join(plugintest.ModuleRoot(), "testdata", "gemini")
	for _, c := range captureCases {
		t.Run(c.name, func(t *testing.T) {
			home, dir := plugintest.Home(t), t.TempDir()
			var out []byte
			session := ""
			for _, turn := range c.turns {
				g := plugintest.NewGemini(t, turn.replies...)
				env := plugintest.GeminiEnv(t, g, home)
				if c.settings != "" {
					if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(c.settings), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				args := []string{"-p", turn.prompt, "-o", "stream-json", "-m", "gemini-2.5-flash"}
				args = append(args, turn.args...)
				if session != "" {
					args = append(args, "--resume", session)
				}
				out = plugintest.RunCLI(t, bin, dir, env, args...)
				session = sessionID(out)
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
				plugintest.CopyHistory(t, filepath.Join(home, ".gemini"), filepath.Join(outDir, "history", ".gemini"), dir, CaptureWorkdir, keepHistory)
			}
		})
	}
}

func sessionID(out []byte) string {
	for _, line := range bytes.Split(out, []byte("\n")) {
		var ev struct {
			Type      string `json:"type"`
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Type == "init" {
			return ev.SessionID
		}
	}
	return ""
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
}

// TestCaptureACP rewrites the recorded ACP sessions from the real CLI:
// go test ./plugins/gemini -run TestCaptureACP -capture.
func TestCaptureACP(t *testing.T) {
	plugintest.RecordSessions(t, *capture, "gemini", "acp", CaptureWorkdir, acpCases, func(t *testing.T, bin string, replies []plugintest.Reply) (core.Plugin, plugintest.Model) {
		model, home := plugintest.NewGemini(t, replies...), plugintest.Home(t)
		return New(Config{Bin: bin, Model: "gemini-2.5-flash", Home: home, Env: plugintest.GeminiEnv(t, model, home)}, nil), model
	})
}

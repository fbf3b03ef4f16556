package gemini_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// newFixture runs the real pinned Gemini CLI against a fake model, in its
// configured approval mode (auto_edit: edits run, shell commands are
// asked about, or denied one-shot).
func newFixture(t *testing.T, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	return newFixtureWith(t, gemini.Config{}, replies...)
}

// newFixtureWith is newFixture with cfg's approval mode and clock.
func newFixtureWith(t *testing.T, cfg gemini.Config, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	bin := plugintest.CLIPath(t, "gemini")
	model := plugintest.NewGemini(t, replies...)
	return plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return gemini.New(gemini.Config{Bin: bin, Model: "gemini-2.5-flash", Home: home, ApprovalMode: cfg.ApprovalMode,
			Clock: cfg.Clock, Env: append(plugintest.GeminiEnv(t, model, home), mark)}, nil)
	})
}

func shell(cmd string) *plugintest.ToolCall {
	return &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": cmd}}
}

// chatFiles are the session's chat files in the fixture's home.
func chatFiles(f *plugintest.Fixture, token string) string {
	return filepath.Join(f.Home, ".gemini", "tmp", "*", "chats", "session-*-"+token[:8]+".jsonl")
}

func TestPlugin(t *testing.T) {
	plugintest.Suite{
		Fixture:   newFixture,
		Shell:     shell,
		ShellTool: "Shell",
		Grow: func(f *plugintest.Fixture, token string) {
			plugintest.AppendTo(f.T, chatFiles(f, token), `{"id":"elsewhere","type":"user","content":[{"text":"from a terminal"}]}`+"\n")
		},
		ImageMark: "inlineData",
		Missing:   func(bin string) core.Plugin { return gemini.New(gemini.Config{Bin: bin}, nil) },
		Install:   "`npm install -g @google/gemini-cli`, or set GEMINI_BIN",
	}.Run(t)
}

func TestRunShowsShellCommand(t *testing.T) {
	t.Parallel()
	// Headless, the default auto_edit mode denies shell commands.
	f := newFixtureWith(t, gemini.Config{ApprovalMode: "yolo"},
		plugintest.Reply{Tool: shell("echo made > made.txt && echo done")}, plugintest.Reply{Text: []string{"Made it."}})
	tr := f.Run(context.Background(), "make a file", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	tools := tr.Blocks(core.BlockToolUse)
	if len(tools) != 2 {
		t.Fatalf("tool blocks = %+v, want running then done", tools)
	}
	want := core.ResponseBlock{Kind: core.BlockToolUse, ID: tools[0].ID, Tool: "Shell",
		Text: "echo made > made.txt && echo done", Status: core.ToolDone, Detail: "done"}
	if tools[0].Status != core.ToolRunning || tools[1] != want {
		t.Errorf("tool blocks = %+v, want running then %+v", tools, want)
	}
	if b, err := os.ReadFile(filepath.Join(f.Workdir, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("made.txt = %q, %v", b, err)
	}
	if got := tr.Text(); got != "Made it." {
		t.Errorf("text = %q, want the answer after the tool", got)
	}
}

func TestRunShowsModelError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Status: 400, Message: "API key not valid. Please pass a valid API key."})
	tr := f.Run(context.Background(), "say hello", "")
	if tr.Err != nil || !tr.Result.IsError {
		t.Fatalf("Run = %+v, %v; want a failed turn shown as a block", tr.Result, tr.Err)
	}
	errs := tr.Blocks(core.BlockError)
	if len(errs) != 1 || errs[0].Text != "API error 400 (INVALID_ARGUMENT): API key not valid. Please pass a valid API key." {
		t.Errorf("error blocks = %+v, want one with the API's message", errs)
	}
	if warns := tr.Blocks(core.BlockWarning); len(warns) != 0 {
		t.Errorf("warnings = %+v, want none (the error is not repeated)", warns)
	}
}

// A session the CLI has not saved (gone, or stopped before the model
// answered) cannot be resumed: the turn says so and goes on in a new one,
// one-shot and through ACP alike.
func TestRunUnknownResume(t *testing.T) {
	t.Parallel()
	const gone = "6f0e21d2-5e4a-4f4c-9d0e-1b2c3d4e5f60"
	for _, ask := range []bool{false, true} {
		t.Run(map[bool]string{false: "one-shot", true: "acp"}[ask], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, plugintest.Reply{Text: []string{"Fresh start."}})
			tr := plugintest.RunTurn(context.Background(), t, f.Plugin, f.Turn("hello", gone, ask))
			warns := tr.Blocks(core.BlockWarning)
			if tr.Err != nil || len(warns) != 1 || !strings.Contains(warns[0].Text, gone) && !strings.Contains(warns[0].Text, "could not resume") ||
				!strings.Contains(tr.Text(), "Fresh start.") || tr.Result.ResumeToken == gone || tr.Result.ResumeToken == "" {
				t.Errorf("Run = %+v, %v; want a warning, then the turn in a new session", tr.Result, tr.Err)
			}
		})
	}
}

// Headless, the CLI's approval mode denies a shell command (auto_edit):
// the call shows as not run for want of permission, not as a tool the
// CLI lacks, and the denial is listed.
func TestRunShowsModeDenial(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Tool: shell("echo made > made.txt")}, plugintest.Reply{Text: []string{"I may not."}})
	tr := f.Run(context.Background(), "make a file", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	tools := tr.Blocks(core.BlockToolUse)
	if len(tools) != 2 || tools[1].Status != core.ToolFailed || tools[1].Detail != "not run for want of permission" {
		t.Errorf("tool blocks %+v, want the call failed for want of permission", tools)
	}
	if w := tr.Blocks(core.BlockWarning); len(w) != 1 || w[0].Text != "Not run, for want of permission: Shell `echo made > made.txt`" {
		t.Errorf("warnings %+v, want the denial listed", w)
	}
}

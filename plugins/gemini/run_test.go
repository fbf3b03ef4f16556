package gemini_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// newFixture runs the real pinned Gemini CLI against a fake model, in its
// configured approval mode (auto_edit: edits run, shell commands are
// asked about, or denied one-shot).
func newFixture(t testing.TB, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	return newFixtureWith(t, gemini.Config{}, replies...)
}

// newFixtureWith is newFixture with cfg's approval mode and clock.
func newFixtureWith(t testing.TB, cfg gemini.Config, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	bin := plugintest.CLIPath(t, "gemini")
	model := plugintest.NewGemini(t, replies...)
	return plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return gemini.New(gemini.Config{Home: home, ApprovalMode: cfg.ApprovalMode, Clock: cfg.Clock, Settings: cliproc.Settings{
			Bin: bin, Model: "gemini-2.5-flash", Env: append(plugintest.GeminiEnv(t, model, home), mark), Sandbox: cfg.Sandbox}}, nil)
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
		// Headless, the default auto_edit mode denies shell commands.
		Unasked: func(t testing.TB, replies ...plugintest.Reply) *plugintest.Fixture {
			return newFixtureWith(t, gemini.Config{ApprovalMode: "yolo"}, replies...)
		},
		Walled: func(t testing.TB, sb *cliproc.Sandbox, replies ...plugintest.Reply) *plugintest.Fixture {
			return newFixtureWith(t, gemini.Config{ApprovalMode: "yolo", Settings: cliproc.Settings{Sandbox: sb}}, replies...)
		},
		// Over ACP the CLI reports no output of a shell command.
		ShellDetail: "",
		ModelError:  "Gemini CLI: API error 400 (INVALID_ARGUMENT): API key not valid.",
		Grow: func(f *plugintest.Fixture, token string) {
			plugintest.AppendTo(f.T, chatFiles(f, token), `{"id":"elsewhere","type":"user","content":[{"text":"from a terminal"}]}`+"\n")
		},
		ImageMark: "inlineData",
		Bare: func(bin, home string) core.Plugin {
			return gemini.New(gemini.Config{Home: home, Settings: cliproc.Settings{Bin: bin}}, nil)
		},
		Install: "`npm install -g @google/gemini-cli`, or set GEMINI_BIN",
		Writes:  readOnlyWrites,
		// ACP in both approval modes: unasked, the bot denies what the
		// mode would ask about.
		WarmsUnasked: true,
	}.Run(t)
}

// A session the CLI has not saved (gone, or stopped before the model
// answered) cannot be resumed: the turn says so and goes on in a new one,
// whether it may ask or not.
func TestRunUnknownResume(t *testing.T) {
	t.Parallel()
	const gone = "6f0e21d2-5e4a-4f4c-9d0e-1b2c3d4e5f60"
	for _, ask := range []bool{false, true} {
		t.Run(map[bool]string{false: "unasked", true: "asks"}[ask], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, plugintest.Reply{Text: []string{"Fresh start."}})
			tr := plugintest.RunTurn(context.Background(), t, f.Plugin, f.Turn("hello", gone, ask))
			warns := tr.Blocks(core.BlockWarning)
			if tr.Err != nil || len(warns) != 1 || !strings.Contains(warns[0].Text, gone) && !strings.Contains(warns[0].Text, "could not resume") ||
				!strings.Contains(tr.Text(), "Fresh start.") || tr.Result.SessionID == gone || tr.Result.SessionID == "" {
				t.Errorf("Run = %+v, %v; want a warning, then the turn in a new session", tr.Result, tr.Err)
			}
		})
	}
}

// Unasked (APPROVALS=auto), what the CLI's approval mode would ask about
// is denied, as headless: a shell command under auto_edit. The call shows
// as not run for want of permission, and the denial is listed.
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

// Gemini CLI asks over ACP before it writes its todo list: the plugin
// allows it unasked in either mode (under auto it was denied, under ask a
// question about nothing), and the model's list is written.
func TestTheTodoListNeedsNoApproval(t *testing.T) {
	t.Parallel()
	for _, ask := range []bool{false, true} {
		t.Run(map[bool]string{false: "auto", true: "ask"}[ask], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t,
				plugintest.Reply{Tool: &plugintest.ToolCall{Name: "write_todos", Input: map[string]any{"todos": []any{
					map[string]any{"description": "Read the code", "status": "completed"},
					map[string]any{"description": "Write the fix", "status": "in_progress"},
				}}}},
				plugintest.Reply{Text: []string{"Planned."}})
			tr := plugintest.RunAnswering(context.Background(), t, f.Plugin, f.Turn("plan it", "", ask), core.Answer{Decision: core.Deny})
			var lines []string
			for _, ev := range tr.Events {
				if ev.Kind == core.EventQuestion {
					t.Errorf("asked %+v", ev.Question)
				}
				lines = append(lines, plugintest.FormatEvent(ev))
			}
			all := strings.Join(lines, "")
			if tr.Err != nil || !strings.Contains(all, `status="done" text="Set 2 todo(s)"`) || strings.Contains(all, "permission") {
				t.Errorf("Run: %v with events\n%s\nwant the todo list written unasked", tr.Err, all)
			}
		})
	}
}

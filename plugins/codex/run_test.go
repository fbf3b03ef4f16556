package codex_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// newFixture runs the real pinned Codex against a fake model.
func newFixture(t testing.TB, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	return newWalledFixture(t, nil, replies...)
}

// newWalledFixture is newFixture with the CLI behind sb.
func newWalledFixture(t testing.TB, sb *cliproc.Sandbox, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	bin := plugintest.CLIPath(t, "codex")
	model := plugintest.NewOpenAI(t, replies...)
	return plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return codex.New(codex.Config{Home: filepath.Join(home, ".codex"), Settings: cliproc.Settings{Bin: bin,
			Args: plugintest.CodexArgs(model), Model: "gpt-5.5", Env: append(plugintest.CodexEnv(t, home), mark), Sandbox: sb}}, nil)
	})
}

func shell(cmd string) *plugintest.ToolCall {
	return &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": cmd}}
}

func TestPlugin(t *testing.T) {
	plugintest.Suite{
		Fixture:      newFixture,
		Shell:        shell,
		ShellTool:    "Shell",
		Unasked:      newFixture, // exec runs commands in its workspace-write sandbox
		ShellDetail:  "exit 0: done",
		Walled:       newWalledFixture,
		ModelError:   "API key not valid. (invalid_request_error)",
		ImageMark:    "input_image",
		WarmsUnasked: true,
		Steers:       true,
		Grow: func(f *plugintest.Fixture, token string) {
			plugintest.AppendTo(f.T, filepath.Join(f.Home, ".codex", "sessions", "*", "*", "*", "rollout-*"+token+".jsonl"), "\n")
		},
		Bare: func(bin, home string) core.Plugin {
			return codex.New(codex.Config{Home: filepath.Join(home, ".codex"), Settings: cliproc.Settings{Bin: bin}}, nil)
		},
		Install: "`npm install -g @openai/codex`, or set CODEX_BIN",
		Writes:  readOnlyWrites,
	}.Run(t)
}

func TestRunUnknownResume(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tr := f.Run(context.Background(), "hello", "01a200ab-a3bb-7bd1-89ba-6a6c80c09a6b")
	errs := tr.Blocks(core.BlockError)
	if tr.Err != nil || !tr.Result.IsError || len(errs) != 1 || !strings.Contains(errs[0].Text, "no rollout found for thread id 01a200ab-a3bb-7bd1-89ba-6a6c80c09a6b") {
		t.Errorf("Run = %+v, %v, errors %+v; want one error naming the thread Codex has no rollout of", tr.Result, tr.Err, errs)
	}
}

// Cancelling an asking turn interrupts it through turn/interrupt; the
// next turn, one-shot, resumes the same thread, which holds the
// interrupted turn.
func TestAppServerInterruptKeepsTheThread(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	f := newFixture(t, plugintest.Reply{Text: []string{"Thinking"}, Hold: hold}, plugintest.Reply{Text: []string{"Continuing."}})
	tr := f.AskInterrupted("think hard")
	out := f.Run(context.Background(), "go on", tr.Result.SessionID)
	if out.Err != nil || !strings.Contains(out.Text(), "Continuing.") || out.Result.SessionID != tr.Result.SessionID {
		t.Fatalf("resumed one-shot turn = %+v", out)
	}
	reqs := f.Model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, "think hard") {
		t.Errorf("the resumed thread lacks the interrupted turn: %q", got)
	}
}

// `codex exec --json` reports file changes without their diffs; once the
// turn is over they show with the diffs Codex recorded in its rollout:
// a file added, changed and moved, then deleted.
func TestRunShowsPatchDiffs(t *testing.T) {
	t.Parallel()
	patch := func(p string) plugintest.Reply {
		return plugintest.Reply{Tool: &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n" + p + "*** End Patch\n"}}}
	}
	f := newFixture(t,
		patch("*** Add File: hello.txt\n+hello\n+world\n"),
		patch("*** Update File: hello.txt\n*** Move to: moved.txt\n@@\n hello\n-world\n+there\n"),
		patch("*** Delete File: moved.txt\n"),
		plugintest.Reply{Text: []string{"Done."}})
	tr := f.Run(context.Background(), "add, change, move and remove a file", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	final := map[string]core.ResponseBlock{}
	var order []string
	for _, b := range tr.Blocks(core.BlockDiff) {
		if _, ok := final[b.ID]; !ok {
			order = append(order, b.ID)
		}
		final[b.ID] = b
	}
	want := []core.ResponseBlock{
		{Path: "hello.txt", Action: "add", Text: "@@ -0,0 +1,2 @@\n+hello\n+world\n"},
		{Path: "hello.txt → moved.txt", Action: "update", Text: "@@ -1,2 +1,2 @@\n hello\n-world\n+there\n"},
		{Path: "moved.txt", Action: "delete", Text: "@@ -1,2 +0,0 @@\n-hello\n-there\n"},
	}
	if len(order) != len(want) {
		t.Fatalf("diff blocks %v, want %d files", order, len(want))
	}
	for i, w := range want {
		if got := final[order[i]]; got.Path != w.Path || got.Action != w.Action || got.Text != w.Text {
			t.Errorf("diff %d = %+v, want %+v", i, got, w)
		}
	}
}

// Codex's own question (its request_user_input tool, on with the feature
// default_mode_request_user_input) is put to the chat with its options,
// and the option picked is Codex's answer.
func TestAppServerPutsCodexsQuestion(t *testing.T) {
	t.Parallel()
	bin := plugintest.CLIPath(t, "codex")
	model := plugintest.NewOpenAI(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "request_user_input", Input: map[string]any{"questions": []any{
			map[string]any{"id": "db", "header": "DB", "question": "Which database?", "options": []any{
				map[string]any{"label": "Postgres", "description": "for the big data"},
				map[string]any{"label": "SQLite", "description": "one file"}}}}}}},
		plugintest.Reply{Text: []string{"SQLite it is."}})
	f := plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return codex.New(codex.Config{Home: filepath.Join(home, ".codex"), Settings: cliproc.Settings{Bin: bin, Model: "gpt-5.5",
			Args: append(plugintest.CodexArgs(model), "-c", "features.default_mode_request_user_input=true"),
			Env:  append(plugintest.CodexEnv(t, home), mark)}}, nil)
	})
	tr := f.Ask(context.Background(), "pick a database", "", core.Answer{Decision: core.Allow, Choice: "SQLite"})
	if tr.Err != nil || tr.Result.IsError || !strings.Contains(tr.Text(), "SQLite it is.") {
		t.Fatalf("Run = %+v, %v, %q", tr.Result, tr.Err, tr.Text())
	}
	qs := tr.Questions()
	if len(qs) != 1 || qs[0].Summary != "Which database?" || strings.Join(qs[0].Options, ",") != "Postgres,SQLite" ||
		!strings.Contains(qs[0].Detail, "SQLite: one file") {
		t.Fatalf("questions %+v, want Codex's with its options", qs)
	}
	reqs := model.Requests()
	if got := string(reqs[len(reqs)-1].Body); !strings.Contains(got, `{\"answers\":{\"db\":{\"answers\":[\"SQLite\"]}}}`) {
		t.Errorf("Codex was not given the answer:\n%.3000s", got)
	}
}

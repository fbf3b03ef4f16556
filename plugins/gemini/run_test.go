package gemini_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// fixture runs the real pinned Gemini CLI against a fake model, in a private
// home and workdir, and checks that no process outlives the test.
type fixture struct {
	t       *testing.T
	model   *plugintest.Gemini
	home    string
	workdir string
	plugin  *gemini.Plugin
}

func newFixture(t *testing.T, replies ...plugintest.Reply) *fixture {
	t.Helper()
	bin := plugintest.CLIPath(t, "gemini")
	f := &fixture{t: t, model: plugintest.NewGemini(t, replies...), home: plugintest.Home(t)}
	wd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.workdir = wd
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	f.plugin = gemini.New(gemini.Config{
		Bin:   bin,
		Model: "gemini-2.5-flash",
		Home:  f.home,
		Env:   append(plugintest.GeminiEnv(t, f.model, f.home), mark),
	}, nil)
	return f
}

// run runs one turn in the fixture's workdir.
func (f *fixture) run(ctx context.Context, prompt, token string) plugintest.TurnOutput {
	f.t.Helper()
	return plugintest.RunTurn(ctx, f.t, f.plugin, core.Turn{Workdir: f.workdir, Prompt: prompt, ResumeToken: token})
}

func TestRunStreamsReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Hello", " from", " the fake."}})
	// A prompt that starts with a dash is still a prompt.
	tr := f.run(context.Background(), "-v say hello", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v; want success", tr.Result, tr.Err)
	}
	if got := tr.Text(); got != "Hello from the fake." {
		t.Errorf("text = %q, want the fake's reply", got)
	}
	if tr.Events[0].Kind != core.EventSession || tr.Events[0].ResumeToken != tr.Result.ResumeToken {
		t.Errorf("first event = %+v, want the session with token %q", tr.Events[0], tr.Result.ResumeToken)
	}
	if err := f.plugin.CheckResumeID(tr.Result.ResumeToken); err != nil {
		t.Errorf("resume token: %v", err)
	}
	if reqs := f.model.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Text(), "-v say hello") {
		t.Errorf("the model did not get the prompt: %d requests", len(reqs))
	}
}

func TestRunResumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Text: []string{"I will remember 42."}},
		plugintest.Reply{Text: []string{"It was 42."}},
	)
	first := f.run(context.Background(), "remember the number 42", "")
	if first.Err != nil || first.Result.ResumeToken == "" {
		t.Fatalf("first turn = %+v, %v", first.Result, first.Err)
	}
	// A new plugin, as after a restart of the bot: only the token carries.
	f.plugin = gemini.New(gemini.Config{Bin: plugintest.CLIPath(t, "gemini"), Model: "gemini-2.5-flash",
		Env: plugintest.GeminiEnv(t, f.model, f.home)}, nil)
	second := f.run(context.Background(), "which number?", first.Result.ResumeToken)
	if second.Err != nil || second.Text() != "It was 42." {
		t.Fatalf("second turn = %q, %v", second.Text(), second.Err)
	}
	if second.Result.ResumeToken != first.Result.ResumeToken {
		t.Errorf("resumed token = %q, want the thread %q", second.Result.ResumeToken, first.Result.ResumeToken)
	}
	reqs := f.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	sent := reqs[1].Text()
	for _, want := range []string{"remember the number 42", "I will remember 42.", "which number?"} {
		if !strings.Contains(sent, want) {
			t.Errorf("the resumed request lacks %q", want)
		}
	}
}

func TestRunShowsShellCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo made > made.txt && echo done"}}},
		plugintest.Reply{Text: []string{"Made it."}},
	)
	// Headless, the default auto_edit mode denies shell commands.
	f.plugin = gemini.New(gemini.Config{Bin: plugintest.CLIPath(t, "gemini"), Model: "gemini-2.5-flash",
		ApprovalMode: "yolo", Env: plugintest.GeminiEnv(t, f.model, f.home)}, nil)
	tr := f.run(context.Background(), "make a file", "")
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
	if b, err := os.ReadFile(filepath.Join(f.workdir, "made.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("made.txt = %q, %v", b, err)
	}
	if got := tr.Text(); got != "Made it." {
		t.Errorf("text = %q, want the answer after the tool", got)
	}
}

func TestRunShowsModelError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Status: 400, Message: "API key not valid. Please pass a valid API key."})
	tr := f.run(context.Background(), "say hello", "")
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
// answered) cannot be resumed: the turn says so and goes on in a new one.
func TestRunUnknownResume(t *testing.T) {
	t.Parallel()
	const gone = "6f0e21d2-5e4a-4f4c-9d0e-1b2c3d4e5f60"
	f := newFixture(t, plugintest.Reply{Text: []string{"Fresh start."}})
	tr := f.run(context.Background(), "hello", gone)
	warns := tr.Blocks(core.BlockWarning)
	if tr.Err != nil || len(warns) != 1 || !strings.Contains(warns[0].Text, "no saved session "+gone) ||
		!strings.Contains(tr.Text(), "Fresh start.") || tr.Result.ResumeToken == gone || tr.Result.ResumeToken == "" {
		t.Errorf("Run = %+v, %v; want a warning, then the turn in a new session", tr.Result, tr.Err)
	}
}

func TestRunNotInstalled(t *testing.T) {
	t.Parallel()
	p := gemini.New(gemini.Config{Bin: filepath.Join(t.TempDir(), "gemini")}, nil)
	_, err := p.Run(context.Background(), core.Turn{Workdir: t.TempDir(), Prompt: "hi"}, func(core.Event) {})
	var ue *core.UserError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "GEMINI_BIN") || !strings.Contains(ue.Msg, "@google/gemini-cli") {
		t.Errorf("Run error = %v, want a user error saying how to install the Gemini CLI", err)
	}
}

func TestRunCancelLeavesNoProcess(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	defer close(hold)
	f := newFixture(t, plugintest.Reply{Text: []string{"too late"}, Hold: hold})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan plugintest.TurnOutput)
	go func() { done <- f.run(ctx, "take your time", "") }()
	select {
	case <-f.model.Arrived():
	case tr := <-done:
		t.Fatalf("Run returned before the model was asked: %+v, %v", tr.Result, tr.Err)
	case <-time.After(time.Minute):
		t.Fatal("the model was never asked")
	}
	cancel()
	tr := <-done
	if !errors.Is(tr.Err, context.Canceled) {
		t.Errorf("Run error = %v, want context.Canceled", tr.Err)
	}
	if tr.Result.ResumeToken == "" {
		t.Errorf("a cancelled turn lost its resume token")
	}
	// The fixture's cleanup checks that no process is left.
}

func TestConversationsListsSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Hi."}})
	tr := f.run(context.Background(), "first prompt of the session", "")
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	infos, err := f.plugin.Conversations(context.Background(), f.workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].ID != tr.Result.ResumeToken || infos[0].Title != "first prompt of the session" || infos[0].Updated.IsZero() {
		t.Errorf("Conversations = %+v, want the session %s", infos, tr.Result.ResumeToken)
	}
	if other, err := f.plugin.Conversations(context.Background(), t.TempDir()); err != nil || len(other) != 0 {
		t.Errorf("Conversations(another dir) = %+v, %v; want none", other, err)
	}
}

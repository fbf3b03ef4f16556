package plugintest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Model is a fake model server as the shared plugin tests use it.
type Model interface {
	Push(replies ...Reply)
	Requests() []Request
	Arrived() <-chan Request
}

// Fixture is one test's plugin over its real CLI: a fake model, a private
// home and workdir, and a check at the end of the test that no process
// the CLI started outlived it.
type Fixture struct {
	T       testing.TB
	Model   Model
	Home    string
	Workdir string
	Plugin  core.Plugin
	// Restart makes another plugin on the same CLI, model and home, as
	// after a restart of the bot: only session ids carry over.
	Restart func() core.Plugin
}

// NewFixture makes a fixture around model: newPlugin makes the plugin for
// a home, whose CLI must get mark in its environment (the leak check
// looks for processes that have it). The workdir is a git repository
// that ignores .jakebot/, as the bot leaves one.
func NewFixture(t testing.TB, model Model, newPlugin func(home, mark string) core.Plugin) *Fixture {
	t.Helper()
	f := &Fixture{T: t, Model: model, Home: Home(t), Workdir: Workdir(t)}
	mark := NoLeaks(t)
	f.Restart = func() core.Plugin { return newPlugin(f.Home, mark) }
	f.Plugin = f.Restart()
	return f
}

// Workdir returns a new git repository for a test that ignores .jakebot/,
// its path with symlinks resolved, as the CLIs report it.
func Workdir(t testing.TB) string {
	t.Helper()
	wd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", wd).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(wd, ".git", "info", "exclude"), []byte(".jakebot/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return wd
}

// NoLeaks returns an environment entry to give every process a test
// starts, and checks at the end of the test that none that has it still
// runs.
func NoLeaks(t testing.TB) string {
	t.Helper()
	mark, alive := ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	return mark
}

// Turn is a turn in the fixture's workdir.
func (f *Fixture) Turn(prompt, token string, ask bool) core.Turn {
	return core.Turn{Workdir: f.Workdir, Prompt: prompt, SessionID: token, Ask: ask}
}

// Run runs one turn of the fixture's plugin, which may not ask.
func (f *Fixture) Run(ctx context.Context, prompt, token string) TurnOutput {
	f.T.Helper()
	return RunTurn(ctx, f.T, f.Plugin, f.Turn(prompt, token, false))
}

// Ask runs one turn that may ask, answering every question with answer.
func (f *Fixture) Ask(ctx context.Context, prompt, token string, answer core.Answer) TurnOutput {
	f.T.Helper()
	return RunAnswering(ctx, f.T, f.Plugin, f.Turn(prompt, token, true), answer)
}

// AskInterrupted runs a turn that may ask and stops it once the model is
// asked, which must hold its reply meanwhile (Reply.Hold). The turn must
// end with the cancellation and the session it was in.
func (f *Fixture) AskInterrupted(prompt string) TurnOutput {
	f.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-f.Model.Arrived():
			cancel()
		case <-ctx.Done():
		}
	}()
	tr := f.Ask(ctx, prompt, "", core.Answer{})
	if !errors.Is(tr.Err, context.Canceled) || tr.Result.SessionID == "" {
		f.T.Fatalf("Run = %+v, %v; want the cancellation and the session", tr.Result, tr.Err)
	}
	return tr
}

// Suite is the tests every built-in plugin passes with its real CLI.
type Suite struct {
	// Fixture makes a fixture whose model answers with replies.
	Fixture func(t testing.TB, replies ...Reply) *Fixture
	// Shell is the tool call with which the model runs cmd, and ShellTool
	// the tool the chat is asked about.
	Shell     func(cmd string) *ToolCall
	ShellTool string
	// DenialSays, when set, is what the model is told of a denial with
	// the reason "not here"; CLIs that pass no reason leave it empty.
	DenialSays string
	// Grow adds to session token's history as the CLI resumed elsewhere
	// (in a terminal) would, while a warm CLI waits on it.
	Grow func(f *Fixture, token string)
	// Unasked is Fixture with a CLI that runs shell commands without
	// asking, and ShellDetail what the block of a finished one says of a
	// command that printed "done".
	Unasked     func(t testing.TB, replies ...Reply) *Fixture
	ShellDetail string
	// Walled is Unasked with the CLI behind sandbox sb.
	Walled func(t testing.TB, sb *cliproc.Sandbox, replies ...Reply) *Fixture
	// ShellDetailRE, when set, is what that detail must match instead:
	// for an agent whose report of a command holds what changes from run
	// to run (a process id).
	ShellDetailRE *regexp.Regexp
	// ModelError is the error block of a turn whose model answers 400
	// with the message "API key not valid." (status and type as the
	// CLI's API gives them).
	ModelError string
	// ImageMark is how the model's request carries an image.
	ImageMark string
	// Bare is the plugin with no model: its CLI's binary at bin and its
	// state in home, either of which may not exist. With no binary there,
	// its error must name Install.
	Bare    func(bin, home string) core.Plugin
	Install string
	// WarmsUnasked says the CLI speaks its protocol in both approval
	// modes: a turn that does not ask starts warm too.
	WarmsUnasked bool
	// Steers says the CLI takes a message into a running turn (its
	// Turn.Inbox), which reaches the model at the turn's next step.
	Steers bool
	// DenialEndsTurn says the agent ends the turn when a tool call is
	// denied, without asking the model again.
	DenialEndsTurn bool
	// Writes are the writes the model attempts in a read-only turn, each
	// of which the CLI must refuse.
	Writes []Write
	// Lacks are the suite's tests (by name, or "StaleWarmTurn": the
	// warm CLI told stale once Grow grew its session) the plugin cannot
	// pass, each with why: they are skipped saying so.
	Lacks map[string]string
}

// lacks skips t, saying why, when the plugin cannot pass test.
func (s Suite) lacks(t *testing.T, test string) {
	t.Helper()
	if why, ok := s.Lacks[test]; ok {
		t.Skipf("%s: the plugin cannot: %s", test, why)
	}
}

// AppendTo appends line to the largest file that matches pattern (a
// session's history, not the small files a CLI may leave beside it),
// failing the test when none does.
func AppendTo(t testing.TB, pattern, line string) {
	t.Helper()
	files, _ := filepath.Glob(pattern)
	largest, size := "", int64(-1)
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Size() > size {
			largest, size = f, fi.Size()
		}
	}
	if largest == "" {
		t.Fatalf("no file matches %s", pattern)
	}
	fh, err := os.OpenFile(largest, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString(line); err != nil {
		t.Fatal(err)
	}
}

// Run runs the suite, each test in parallel.
func (s Suite) Run(t *testing.T) {
	for _, test := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"StreamsReply", s.streamsReply},
		{"Resumes", s.resumes},
		{"CancelLeavesNoProcess", s.cancel},
		{"ListsConversations", s.lists},
		{"AsksBeforeACommand", s.asks},
		{"WarmTurn", s.warm},
		{"ImagesReachTheModel", s.images},
		{"ShowsShellCommand", s.shellCommand},
		{"ShowsModelError", s.modelError},
		{"NotInstalled", s.notInstalled},
		{"NoHistory", s.noHistory},
		{"RefusesSessionIDs", s.refusesSessionIDs},
		{"SteersARunningTurn", s.steers},
		{"Sandboxed", s.sandboxed},
		{"ReadOnly", s.readOnly},
	} {
		t.Run(test.name, func(t *testing.T) {
			s.lacks(t, test.name)
			t.Parallel()
			test.run(t)
		})
	}
}

func (s Suite) streamsReply(t *testing.T) {
	f := s.Fixture(t, Reply{Text: []string{"Hello", " from", " the fake."}})
	// A prompt that starts with a dash is still a prompt.
	tr := f.Run(context.Background(), "-v say hello", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v; want success", tr.Result, tr.Err)
	}
	if got := tr.Text(); got != "Hello from the fake." {
		t.Errorf("text = %q, want the fake's reply", got)
	}
	if tr.Events[0].Kind != core.EventSession || tr.Events[0].SessionID != tr.Result.SessionID {
		t.Errorf("first event = %+v, want the session with token %q", tr.Events[0], tr.Result.SessionID)
	}
	if c, ok := f.Plugin.(core.SessionIDChecker); !ok || c.CheckSessionID(tr.Result.SessionID) != nil {
		t.Errorf("session id %q is not one the plugin accepts", tr.Result.SessionID)
	}
	if reqs := f.Model.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Text(), "-v say hello") {
		t.Errorf("the model did not get the prompt: %d requests", len(reqs))
	}
}

func (s Suite) resumes(t *testing.T) {
	f := s.Fixture(t, Reply{Text: []string{"I will remember 42."}}, Reply{Text: []string{"It was 42."}})
	first := f.Run(context.Background(), "remember the number 42", "")
	if first.Err != nil || first.Result.SessionID == "" {
		t.Fatalf("first turn = %+v, %v", first.Result, first.Err)
	}
	f.Plugin = f.Restart()
	second := f.Run(context.Background(), "which number?", first.Result.SessionID)
	if second.Err != nil || second.Text() != "It was 42." {
		t.Fatalf("second turn = %q, %v", second.Text(), second.Err)
	}
	if second.Result.SessionID != first.Result.SessionID {
		t.Errorf("resumed token = %q, want the session %q", second.Result.SessionID, first.Result.SessionID)
	}
	s.remembers(t, f, "remember the number 42", "I will remember 42.", "which number?")
}

// remembers checks that the model's last request holds each of texts.
func (s Suite) remembers(t *testing.T, f *Fixture, texts ...string) {
	t.Helper()
	reqs := f.Model.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	sent := reqs[len(reqs)-1].Text()
	for _, want := range texts {
		if !strings.Contains(sent, want) {
			t.Errorf("the model's last request lacks %q", want)
		}
	}
}

func (s Suite) cancel(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	f := s.Fixture(t, Reply{Text: []string{"too late"}, Hold: hold})
	for _, ask := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan TurnOutput)
		go func() { done <- RunTurn(ctx, t, f.Plugin, f.Turn("take your time", "", ask)) }()
		select {
		case <-f.Model.Arrived():
		case tr := <-done:
			t.Fatalf("Run (ask %v) returned before the model was asked: %+v, %v", ask, tr.Result, tr.Err)
		case <-time.After(time.Minute):
			t.Fatal("the model was never asked")
		}
		cancel()
		tr := <-done
		if !errors.Is(tr.Err, context.Canceled) || tr.Result.SessionID == "" {
			t.Errorf("Run (ask %v) = %+v, %v; want context.Canceled and the session", ask, tr.Result, tr.Err)
		}
		f.Model.Push(Reply{Text: []string{"too late"}, Hold: hold})
	}
	// The fixture checks that no process is left.
}

func (s Suite) lists(t *testing.T) {
	f := s.Fixture(t, Reply{Text: []string{"Hi."}})
	tr := f.Run(context.Background(), "first prompt of the session", "")
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	infos, err := f.Plugin.Conversations(context.Background(), f.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].SessionID != tr.Result.SessionID || infos[0].Title != "first prompt of the session" || infos[0].Updated.IsZero() {
		t.Errorf("Conversations = %+v, want the session %s", infos, tr.Result.SessionID)
	}
	if other, err := f.Plugin.Conversations(context.Background(), t.TempDir()); err != nil || len(other) != 0 {
		t.Errorf("Conversations(another dir) = %+v, %v; want none", other, err)
	}
}

// shellCommand: a shell command the model runs shows as a tool block,
// running and then done with what it printed, and it ran in the workdir.
func (s Suite) shellCommand(t *testing.T) {
	const cmd = "echo made > made.txt && echo done"
	f := s.Unasked(t, Reply{Tool: s.Shell(cmd)}, Reply{Text: []string{"Made it."}})
	tr := f.Run(context.Background(), "make a file", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	tools := tr.Blocks(core.BlockToolUse)
	if len(tools) != 2 {
		t.Fatalf("tool blocks = %+v, want running then done", tools)
	}
	want := core.ResponseBlock{Kind: core.BlockToolUse, ID: tools[0].ID, Tool: s.ShellTool, Text: cmd, Status: core.ToolDone, Detail: s.ShellDetail}
	if s.ShellDetailRE != nil && s.ShellDetailRE.MatchString(tools[1].Detail) {
		want.Detail = tools[1].Detail
	}
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

// modelError: the model's refusal ends the turn as a failed one, shown
// once, as an error block with the API's message.
func (s Suite) modelError(t *testing.T) {
	f := s.Fixture(t, Reply{Status: 400, Message: "API key not valid."})
	tr := f.Run(context.Background(), "say hello", "")
	if tr.Err != nil || !tr.Result.IsError {
		t.Fatalf("Run = %+v, %v; want a failed turn shown as a block", tr.Result, tr.Err)
	}
	if errs := tr.Blocks(core.BlockError); len(errs) != 1 || errs[0].Text != s.ModelError {
		t.Errorf("error blocks = %+v, want one saying %q", errs, s.ModelError)
	}
	if warns := tr.Blocks(core.BlockWarning); len(warns) != 0 {
		t.Errorf("warnings = %+v, want none (the error is not repeated)", warns)
	}
}

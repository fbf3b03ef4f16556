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
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// A resumed turn runs through ACP too (session/load), asking before a
// command, and its reply holds only this turn, not the history the CLI
// replays. The session loses nothing to the pinned CLI's ways (see
// guardLoad and dropLoadLeftovers): loaded within the minute it started,
// its chat file is renamed first; another conversation's CLI starting in
// the workdir (and cleaning up its chats) leaves it whole; the next
// resumed turn has all of it.
func TestACPResumedTurnAsks(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	f := newFixtureWith(t, gemini.Config{Clock: clock},
		plugintest.Reply{Text: []string{"I will remember 42."}},
		plugintest.Reply{Text: []string{"Checking."}, Tool: shell("echo 42 > n.txt")},
		plugintest.Reply{Text: []string{"Saved."}},
		plugintest.Reply{Text: []string{"Hello."}},
		plugintest.Reply{Text: []string{"Still 42."}})
	first := f.Ask(context.Background(), "remember the number 42", "", core.Answer{})
	if first.Err != nil || first.Result.SessionID == "" {
		t.Fatalf("first turn = %+v, %v", first.Result, first.Err)
	}
	token := first.Result.SessionID
	files, _ := filepath.Glob(chatFiles(f, token))
	if len(files) != 1 {
		t.Fatalf("chat files %q, want the session's", files)
	}
	// The bot's clock in the minute the session's file is named for.
	started, err := time.Parse("2006-01-02T15-04", strings.TrimPrefix(filepath.Base(files[0]), "session-")[:16])
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(started.Add(30 * time.Second).Sub(clock.Now()))

	second := f.Ask(context.Background(), "save it", token, core.Answer{Decision: core.Allow})
	if second.Err != nil || second.Result.SessionID != token {
		t.Fatalf("resumed turn = %+v, %v; want it in session %s", second.Result, second.Err, token)
	}
	if qs := second.Questions(); len(qs) != 1 || qs[0].Summary != "`echo 42 > n.txt`" {
		t.Errorf("questions %+v, want the command asked about", qs)
	}
	if text := second.Text(); text != "Checking.Saved." {
		t.Errorf("text %q, want this turn's only (no replayed history)", text)
	}
	if b, err := os.ReadFile(filepath.Join(f.Workdir, "n.txt")); err != nil || string(b) != "42\n" {
		t.Errorf("n.txt = %q, %v", b, err)
	}
	moved := filepath.Join(filepath.Dir(files[0]), "session-"+started.Add(-time.Minute).Format("2006-01-02T15-04")+"-"+token[:8]+".jsonl")
	if _, err := os.Stat(moved); err != nil {
		t.Errorf("the session's file was not moved out of the CLI's way to %s: %v", moved, err)
	}
	if other := f.Ask(context.Background(), "hello", "", core.Answer{}); other.Err != nil || other.Result.SessionID == token {
		t.Fatalf("another conversation = %+v, %v", other.Result, other.Err)
	}
	third := f.Ask(context.Background(), "which number?", token, core.Answer{})
	if third.Err != nil || third.Text() != "Still 42." || third.Result.SessionID != token {
		t.Fatalf("next resumed turn = %+v, %q, %v", third.Result, third.Text(), third.Err)
	}
	reqs := f.Model.Requests()
	sent := reqs[len(reqs)-1].Text()
	for _, want := range []string{"remember the number 42", "I will remember 42.", "save it", "Saved.", "which number?"} {
		if !strings.Contains(sent, want) {
			t.Errorf("the last request lacks %q: the session lost history", want)
		}
	}
}

// Stopping a turn through ACP keeps it in the session, whenever it
// comes: before the model answers and in the middle of its answer, where
// the pinned CLI drops the turn from the session (and a first turn's
// session with it) and the plugin puts it back, and while a tool call
// waits for permission, where the CLI keeps it. The next turn continues
// the same session, and its request to the model carries the stopped
// turn's message and what the model had said; the command asked about
// never runs. A turn that may not ask (APPROVALS=auto) is stopped the same
// way: it too runs through ACP.
func TestACPInterruptThenResume(t *testing.T) {
	t.Parallel()
	const note = "[The previous response was interrupted before it completed.]"
	for _, tc := range []struct {
		name string
		// earlier is whether a turn comes before the stopped one.
		earlier bool
		reply   func(hold chan struct{}) plugintest.Reply
		// stop tells the event the turn is stopped at; nil: the
		// model's request.
		stop func(core.Event) bool
		want []string
		// unasked: the turn may not ask (APPROVALS=auto).
		unasked bool
	}{
		{"before the answer", false, func(hold chan struct{}) plugintest.Reply {
			return plugintest.Reply{Text: []string{"never"}, Hold: hold}
		}, nil, []string{"think hard", note}, false},
		{"mid-answer", true, func(hold chan struct{}) plugintest.Reply {
			return plugintest.Reply{Partial: []string{"Pineapples are "}, Text: []string{"never"}, Hold: hold}
		}, func(ev core.Event) bool { return ev.Kind == core.EventText },
			[]string{"remember the number 42", "I will remember 42.", "think hard", "Pineapples are\n\n" + note}, false},
		{"mid-answer, unasked", true, func(hold chan struct{}) plugintest.Reply {
			return plugintest.Reply{Partial: []string{"Pineapples are "}, Text: []string{"never"}, Hold: hold}
		}, func(ev core.Event) bool { return ev.Kind == core.EventText },
			[]string{"remember the number 42", "I will remember 42.", "think hard", "Pineapples are\n\n" + note}, true},
		{"at a question", false, func(chan struct{}) plugintest.Reply {
			return plugintest.Reply{Text: []string{"Creating."}, Tool: shell("echo made > made.txt")}
		}, func(ev core.Event) bool { return ev.Kind == core.EventQuestion }, []string{"think hard", "Creating."}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hold := make(chan struct{})
			t.Cleanup(func() { close(hold) })
			replies := []plugintest.Reply{tc.reply(hold), {Text: []string{"Continuing."}}}
			if tc.earlier {
				replies = append([]plugintest.Reply{{Text: []string{"I will remember 42."}}}, replies...)
			}
			f := newFixture(t, replies...)
			token := ""
			if tc.earlier {
				first := f.Ask(context.Background(), "remember the number 42", "", core.Answer{})
				if first.Err != nil {
					t.Fatal(first.Err)
				}
				token = first.Result.SessionID
			}
			stopped := stopAt(f, "think hard", token, !tc.unasked, tc.stop)
			if token == "" {
				token = stopped.Result.SessionID
			}
			goOn(f, token, tc.want...)
			if _, err := os.Stat(filepath.Join(f.Workdir, "made.txt")); err == nil {
				t.Error("the command asked about ran")
			}
		})
	}
}

// goOn runs the turn after a stopped one: it continues session token,
// with no warning, and its request to the model carries want.
func goOn(f *plugintest.Fixture, token string, want ...string) {
	f.T.Helper()
	next := f.Ask(context.Background(), "go on", token, core.Answer{})
	if next.Err != nil || next.Text() != "Continuing." || next.Result.SessionID != token {
		f.T.Fatalf("next turn = %+v, %q, %v; want it to continue session %s", next.Result, next.Text(), next.Err, token)
	}
	if w := next.Blocks(core.BlockWarning); len(w) != 0 {
		f.T.Errorf("warnings %+v, want none", w)
	}
	reqs := f.Model.Requests()
	sent := reqs[len(reqs)-1].Text()
	for _, want := range append(want, "go on") {
		if !strings.Contains(sent, want) {
			f.T.Errorf("the next request lacks %q:\n%s", want, sent)
		}
	}
}

// stopAt runs a turn of prompt in session token (new if empty), which
// may ask or not, and cancels it at the first event stop reports, or, with stop nil, once its
// request reaches the model.
func stopAt(f *plugintest.Fixture, prompt, token string, ask bool, stop func(core.Event) bool) plugintest.TurnOutput {
	f.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stop == nil {
		for len(f.Model.Arrived()) > 0 {
			<-f.Model.Arrived() // earlier turns'
		}
		go func() {
			select {
			case <-f.Model.Arrived():
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	var out plugintest.TurnOutput
	out.Result, out.Err = f.Plugin.Run(ctx, f.Turn(prompt, token, ask), func(ev core.Event) {
		out.Events = append(out.Events, ev)
		if stop != nil && stop(ev) {
			cancel()
		}
	})
	f.T.Logf("events:\n%s", plugintest.FormatEvents(out.Events))
	if !errors.Is(out.Err, context.Canceled) || out.Result.SessionID == "" {
		f.T.Fatalf("Run = %+v, %v; want the cancellation and the session", out.Result, out.Err)
	}
	return out
}

// An edit through ACP is asked about with its diff, and shows as a diff
// block once made: the CLI reports the file before and after.
func TestACPEditsShowDiffs(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": "hello.txt", "content": "one\ntwo\nthree\n"}}},
		plugintest.Reply{Tool: &plugintest.ToolCall{Name: "replace", Input: map[string]any{"file_path": "hello.txt",
			"old_string": "two", "new_string": "TWO", "instruction": "Capitalise the second line."}}},
		plugintest.Reply{Text: []string{"Edited."}})
	turn := f.Turn("edit hello.txt", "", true)
	turn.Mode = "default" // edits are asked about too
	tr := plugintest.RunAnswering(context.Background(), t, f.Plugin, turn, core.Answer{Decision: core.Allow})
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	qs := tr.Questions()
	if len(qs) != 2 || qs[1].Summary != "hello.txt" || qs[1].Detail != "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three" {
		t.Errorf("questions %+v, want the second with the edit's diff", qs)
	}
	d := tr.Blocks(core.BlockDiff)
	if len(d) != 2 || d[0].Path != "hello.txt" || d[0].Action != "add" || d[0].Text != "@@ -0,0 +1,3 @@\n+one\n+two\n+three\n" ||
		d[1].Action != "update" || d[1].Text != "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n" {
		t.Errorf("diff blocks %+v, want the file added, then its line changed", d)
	}
}

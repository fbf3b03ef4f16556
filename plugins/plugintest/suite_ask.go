package plugintest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// RunAnswering runs one turn of p, answering every question with answer,
// and collects its events.
func RunAnswering(ctx context.Context, t testing.TB, p core.Plugin, turn core.Turn, answer core.Answer) TurnOutput {
	t.Helper()
	var out TurnOutput
	out.Result, out.Err = p.Run(ctx, turn, func(ev core.Event) {
		out.Events = append(out.Events, ev)
		if ev.Kind == core.EventQuestion {
			ev.Question.Answer(answer)
		}
	})
	t.Logf("events:\n%s", FormatEvents(out.Events))
	return out
}

// Questions returns the questions the turn asked, in order.
func (o TurnOutput) Questions() []*core.Question {
	var out []*core.Question
	for _, ev := range o.Events {
		if ev.Kind == core.EventQuestion {
			out = append(out, ev.Question)
		}
	}
	return out
}

// asks: the CLI asks before a shell command; the answer reaches it, and
// the session is the one the listing knows.
func (s Suite) asks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  core.Answer
		created bool
	}{
		{"allow", core.Answer{Decision: core.Allow}, true},
		{"always", core.Answer{Decision: core.AllowAlways}, true},
		{"deny", core.Answer{Decision: core.Deny, Reason: "not here"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const cmd = "echo made > made.txt"
			f := s.Fixture(t, Reply{Text: []string{"Creating."}, Tool: s.Shell(cmd)}, Reply{Text: []string{"Finished."}})
			tr := f.Ask(context.Background(), "make a file", "", tc.answer)
			if tr.Err != nil || tr.Result.IsError {
				t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
			}
			qs := tr.Questions()
			if len(qs) != 1 || qs[0].Tool != s.ShellTool || qs[0].Summary != "`"+cmd+"`" {
				t.Fatalf("questions %+v, want one about the command", qs)
			}
			if _, err := os.Stat(filepath.Join(f.Workdir, "made.txt")); (err == nil) != tc.created {
				t.Errorf("made.txt exists: %v, want %v", err == nil, tc.created)
			}
			denied := tc.answer.Decision == core.Deny
			if text := tr.Text(); !strings.Contains(text, "Creating.") || strings.Contains(text, "Finished.") == (denied && s.DenialEndsTurn) {
				t.Errorf("text %q, want the message before the call and, unless the denial ended the turn, the one after", text)
			}
			if tc.answer.Decision == core.Deny {
				// Every denial is shown, whatever the agent says of it.
				want := "Not run, for want of permission: " + s.ShellTool + " `" + cmd + "`"
				if w := tr.Blocks(core.BlockWarning); len(w) == 0 || w[len(w)-1].Text != want {
					t.Errorf("warnings %+v, want the denial listed: %q", w, want)
				}
				if s.DenialSays != "" {
					s.remembers(t, f, s.DenialSays)
				}
			}
			convs, err := f.Plugin.Conversations(context.Background(), f.Workdir)
			if err != nil || len(convs) == 0 || convs[0].SessionID != tr.Result.SessionID || convs[0].Title != "make a file" {
				t.Errorf("listing %+v (%v), want the session %s first", convs, err, tr.Result.SessionID)
			}
		})
	}
}

// warm: a CLI started resumed before its message exists answers the
// message from the session; one whose session was resumed elsewhere
// meanwhile is stale; an unused one leaves no process behind.
func (s Suite) warm(t *testing.T) {
	f := s.Fixture(t, Reply{Text: []string{"First answer."}}, Reply{Text: []string{"Second answer."}})
	warmer, ok := f.Plugin.(core.Warmer)
	if !ok {
		t.Fatal("the plugin cannot start a turn warm")
	}
	first := f.Ask(context.Background(), "first", "", core.Answer{})
	if first.Err != nil || first.Result.SessionID == "" {
		t.Fatalf("first turn = %+v, %v", first.Result, first.Err)
	}
	token := first.Result.SessionID
	switch unasked, err := warmer.Warm(context.Background(), f.Turn("", token, false)); {
	case s.WarmsUnasked && err != nil:
		t.Errorf("Warm of a turn that cannot ask = %v, want a warm CLI", err)
	case s.WarmsUnasked:
		unasked.Close()
	case err != core.ErrNoWarm:
		t.Errorf("Warm of a turn that cannot ask = %v, want ErrNoWarm", err)
	}
	w, err := warmer.Warm(context.Background(), f.Turn("", token, true))
	if err != nil {
		t.Fatal(err)
	}
	if !w.Fresh() {
		t.Fatal("a warm CLI is stale before anything changed")
	}
	var second TurnOutput
	second.Result, second.Err = w.Run(context.Background(), f.Turn("second", token, true), func(ev core.Event) {
		second.Events = append(second.Events, ev)
	})
	if second.Err != nil || second.Text() != "Second answer." || second.Result.SessionID != token {
		t.Fatalf("warm turn = %+v, %v, %q; want the answer in session %s", second.Result, second.Err, second.Text(), token)
	}
	s.remembers(t, f, "first", "First answer.", "second")

	s.lacks(t, "StaleWarmTurn")
	stale, err := warmer.Warm(context.Background(), f.Turn("", token, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stale.Close) // and no process outlives the test (the fixture checks)
	s.Grow(f, token)
	if stale.Fresh() {
		t.Error("a warm CLI whose session grew elsewhere is still fresh")
	}
}

// images: an image the user sent reaches the model, whether the turn
// asks or not.
func (s Suite) images(t *testing.T) {
	for _, ask := range []bool{false, true} {
		t.Run(map[bool]string{false: "one-shot", true: "asking"}[ask], func(t *testing.T) {
			t.Parallel()
			f := s.Fixture(t, Reply{Text: []string{"A red diagonal."}})
			shot, b64 := PNG(t, f.Workdir, ".jakebot/uploads/2026-11-25/screen shot.png")
			turn := f.Turn("what is wrong here?", "", ask)
			turn.Images = []string{shot}
			tr := RunTurn(context.Background(), t, f.Plugin, turn)
			if tr.Err != nil || tr.Text() != "A red diagonal." {
				t.Fatalf("turn = %q, %v", tr.Text(), tr.Err)
			}
			reqs := f.Model.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the model")
			}
			body := string(reqs[len(reqs)-1].Body)
			if !strings.Contains(body, s.ImageMark) || !strings.Contains(body, b64) || !strings.Contains(body, "what is wrong here?") {
				t.Errorf("the request lacks the image or the prompt:\n%.3000s", body)
			}
		})
	}
}

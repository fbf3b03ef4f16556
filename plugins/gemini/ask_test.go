package gemini_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// askTurn runs an asking turn, answering every question with answer.
func (f *fixture) askTurn(ctx context.Context, prompt, token string, answer core.Answer) ([]*core.Question, string, core.TurnResult, error) {
	var questions []*core.Question
	var text strings.Builder
	res, err := f.plugin.Run(ctx, core.Turn{Workdir: f.workdir, Prompt: prompt, ResumeToken: token, Ask: true}, func(ev core.Event) {
		switch ev.Kind {
		case core.EventQuestion:
			questions = append(questions, ev.Question)
			ev.Question.Answer(answer)
		case core.EventText:
			text.WriteString(ev.Text)
		}
	})
	return questions, text.String(), res, err
}

// The real CLI, through the Agent Client Protocol, asks before a shell
// command; the answer reaches it, and the session is the one the listing
// and a one-shot --resume know.
func TestACPAsksBeforeACommand(t *testing.T) {
	t.Parallel()
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
			f := newFixture(t,
				plugintest.Reply{Text: []string{"Creating."}, Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "echo made > made.txt"}}},
				plugintest.Reply{Text: []string{"Finished."}},
				plugintest.Reply{Text: []string{"Still here."}})
			questions, text, res, err := f.askTurn(context.Background(), "make a file", "", tc.answer)
			if err != nil || res.IsError || res.ResumeToken == "" {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if len(questions) != 1 || questions[0].Tool != "Shell" || questions[0].Summary != "`echo made > made.txt`" {
				t.Fatalf("questions %+v, want one about the command", questions)
			}
			if _, err := os.Stat(filepath.Join(f.workdir, "made.txt")); (err == nil) != tc.created {
				t.Errorf("made.txt exists: %v, want %v", err == nil, tc.created)
			}
			if !strings.Contains(text, "Creating.") || !strings.Contains(text, "Finished.") {
				t.Errorf("text %q, want both messages", text)
			}
			convs, err := f.plugin.Conversations(context.Background(), f.workdir)
			if err != nil || len(convs) == 0 || convs[0].ID != res.ResumeToken || convs[0].Title != "make a file" {
				t.Errorf("listing %+v (%v), want the ACP session %s first", convs, err, res.ResumeToken)
			}
			if tc.name != "allow" {
				return
			}
			// A one-shot turn resumes the session the protocol made.
			out := f.run(context.Background(), "are you there", res.ResumeToken)
			if out.Err != nil || !strings.Contains(out.Text(), "Still here.") || out.Result.ResumeToken != res.ResumeToken {
				t.Errorf("one-shot resume of the ACP session = %+v", out)
			}
		})
	}
}

// Cancelling an asking turn sends session/cancel and ends it, leaving no
// process behind. Stopped before the model answered, the session was
// never saved: the next turn says so and goes on in a new one.
func TestACPCancelThenGoOn(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	f := newFixture(t,
		plugintest.Reply{Text: []string{"Thinking"}, Hold: hold},
		plugintest.Reply{Text: []string{"Continuing."}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.model.Arrived()
		cancel()
	}()
	_, _, res, err := f.askTurn(ctx, "think hard", "", core.Answer{})
	if err == nil || res.ResumeToken == "" {
		t.Fatalf("Run = %+v, %v; want the cancellation and the session", res, err)
	}
	_, text, res2, err := f.askTurn(context.Background(), "go on", res.ResumeToken, core.Answer{})
	if err != nil || !strings.Contains(text, "Continuing.") || res2.ResumeToken == "" {
		t.Fatalf("next turn = %+v, %v, %q", res2, err, text)
	}
}

// A warm CLI for a conversation's first turn (started, its session new,
// before the message exists) answers the message. A resumed turn does
// not run through ACP (see Plugin.asks), so it cannot be warmed.
func TestACPWarmTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"First answer."}}, plugintest.Reply{Text: []string{"Second answer."}})
	w, err := f.plugin.Warm(context.Background(), core.Turn{Workdir: f.workdir, Ask: true})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Fresh() {
		t.Fatal("a warm CLI for a new session is stale")
	}
	var text strings.Builder
	res, err := w.Run(context.Background(), core.Turn{Workdir: f.workdir, Ask: true, Prompt: "first"}, func(ev core.Event) {
		if ev.Kind == core.EventText {
			text.WriteString(ev.Text)
		}
	})
	if err != nil || !strings.Contains(text.String(), "First answer.") || res.ResumeToken == "" {
		t.Fatalf("warm turn = %+v, %v, %q", res, err, text.String())
	}
	if _, err := f.plugin.Warm(context.Background(), core.Turn{Workdir: f.workdir, Ask: true, ResumeToken: res.ResumeToken}); err != core.ErrNoWarm {
		t.Errorf("Warm of a resumed turn = %v, want ErrNoWarm", err)
	}
	unused, err := f.plugin.Warm(context.Background(), core.Turn{Workdir: f.workdir, Ask: true})
	if err != nil {
		t.Fatal(err)
	}
	unused.Close() // and no process outlives the test (the fixture checks)
}

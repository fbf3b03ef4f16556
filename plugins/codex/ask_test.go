package codex_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// askTurn runs an asking turn, answering every question with answer, and
// returns the questions and the text.
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

// The real app-server asks before a command; the answer reaches it, and
// the thread is the one `codex exec resume` and the listing know.
func TestAppServerAsksBeforeACommand(t *testing.T) {
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
				plugintest.Reply{Text: []string{"Creating."}, Tool: &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "echo made > made.txt"}}},
				plugintest.Reply{Text: []string{"Finished."}})
			questions, text, res, err := f.askTurn(context.Background(), "make a file", "", tc.answer)
			if err != nil || res.IsError {
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
			if err != nil || len(convs) != 1 || convs[0].ID != res.ResumeToken {
				t.Errorf("listing %+v (%v), want the app-server's thread %s", convs, err, res.ResumeToken)
			}
		})
	}
}

// Cancelling an asking turn interrupts it through turn/interrupt; the
// next turn, one-shot, resumes the same thread.
func TestAppServerInterruptKeepsTheThread(t *testing.T) {
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
		t.Fatalf("Run = %+v, %v; want the cancellation and the thread", res, err)
	}
	out := f.run(context.Background(), "go on", res.ResumeToken)
	if out.Err != nil || !strings.Contains(out.Text(), "Continuing.") || out.Result.ResumeToken != res.ResumeToken {
		t.Fatalf("resumed one-shot turn = %+v", out)
	}
	reqs := f.model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, "think hard") {
		t.Errorf("the resumed thread lacks the interrupted turn: %q", got)
	}
}

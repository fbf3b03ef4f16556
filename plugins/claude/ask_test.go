package claude_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Cancelling an asking turn interrupts it through the protocol: the CLI
// ends the turn itself, and the session keeps it for the next turn.
func TestRunInterruptKeepsTheSession(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	f := newFixture(t, plugintest.Reply{Text: []string{"Thinking hard"}, Hold: hold}, plugintest.Reply{Text: []string{"Continuing."}})
	t.Cleanup(func() { close(hold) })
	tr := f.AskInterrupted("think")
	next := f.Ask(context.Background(), "go on", tr.Result.SessionID, core.Answer{})
	if next.Err != nil || !strings.Contains(next.Text(), "Continuing.") {
		t.Fatalf("resumed turn = %+v, %v, %q", next.Result, next.Err, next.Text())
	}
	reqs := f.Model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, "[Request interrupted by user]") || !strings.Contains(got, "think") {
		t.Errorf("the resumed session does not hold the interrupted turn: %q", got)
	}
}

// The agent's own question (AskUserQuestion) is put to the chat with its
// options, and the option picked reaches the agent as its answer.
func TestRunPutsTheAgentsQuestion(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_q", Name: "AskUserQuestion", Input: map[string]any{"questions": []any{
			map[string]any{"question": "Which database?", "header": "DB", "multiSelect": false, "options": []any{
				map[string]any{"label": "Postgres", "description": "for the big data"}, map[string]any{"label": "SQLite", "description": "one file"}}}}}}},
		plugintest.Reply{Text: []string{"SQLite it is."}})
	p, workdir, model := f.Plugin, f.Workdir, f.Model
	var asked []*core.Question
	res, err := p.Run(context.Background(), core.Turn{Workdir: workdir, Prompt: "pick a database", Ask: true}, func(ev core.Event) {
		if ev.Kind == core.EventQuestion {
			asked = append(asked, ev.Question)
			ev.Question.Answer(core.Answer{Decision: core.Allow, Choice: "SQLite"})
		}
	})
	if err != nil || res.IsError {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if len(asked) != 1 || asked[0].Summary != "Which database?" || strings.Join(asked[0].Options, ",") != "Postgres,SQLite" ||
		!strings.Contains(asked[0].Detail, "SQLite: one file") {
		t.Fatalf("asked %+v", asked)
	}
	reqs := model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, `"Which database?"="SQLite"`) {
		t.Errorf("the agent was not told the answer: %q", got)
	}
}

// Plan mode's "ready to code?" (ExitPlanMode) is put to the chat as
// Approve plan / Keep planning. Approved, the turn leaves plan mode: the
// CLI tells the model so ("You have exited plan mode") and its next edit
// runs once allowed. Kept, the model is told to keep planning and stays
// in plan mode. (In plan mode the pinned CLI asks about an edit rather
// than refusing it itself: the chat can still deny it.)
func TestPlanModeApproveOrKeepPlanning(t *testing.T) {
	t.Parallel()
	const exited = "You have exited plan mode"
	for _, tc := range []struct {
		choice  string
		written bool
		told    string
	}{
		{"Approve plan", true, exited},
		{"Keep planning", false, "The user denied this tool call: keep planning"},
	} {
		t.Run(tc.choice, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_plan", Name: "ExitPlanMode",
				Input: map[string]any{"plan": "1. Write notes.txt"}}})
			notes := filepath.Join(f.Workdir, "notes.txt")
			f.Model.Push(plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_write", Name: "Write",
				Input: map[string]any{"file_path": notes, "content": "planned\n"}}}, plugintest.Reply{Text: []string{"Done."}})
			turn := f.Turn("plan it, then do it", "", true)
			turn.Mode = "plan"
			var asked []string
			res, err := f.Plugin.Run(context.Background(), turn, func(ev core.Event) {
				if ev.Kind != core.EventQuestion {
					return
				}
				q := ev.Question
				asked = append(asked, q.Tool)
				switch {
				case q.Tool == "ExitPlanMode":
					q.Answer(core.Answer{Decision: core.Allow, Choice: tc.choice})
				case tc.written:
					q.Answer(core.Answer{Decision: core.Allow})
				default:
					q.Answer(core.Answer{Decision: core.Deny, Reason: "still planning"})
				}
			})
			if err != nil || res.IsError {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if strings.Join(asked, ",") != "ExitPlanMode,Write" {
				t.Errorf("asked about %q, want the plan, then the edit", asked)
			}
			if _, err := os.Stat(notes); (err == nil) != tc.written {
				t.Errorf("notes.txt written: %v, want %v", err == nil, tc.written)
			}
			next := f.Model.Requests()[1].Text()
			if !strings.Contains(next, tc.told) || !tc.written && strings.Contains(next, exited) {
				t.Errorf("after %q the model was not told %q, or left plan mode:\n%.2000s", tc.choice, tc.told, next)
			}
		})
	}
}

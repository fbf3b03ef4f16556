package claude_test

import (
	"context"
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
	p, workdir, model := f.Plugin, f.Workdir, f.Model
	ctx, cancel := context.WithCancel(context.Background())
	var session string
	res, err := p.Run(ctx, core.Turn{Workdir: workdir, Prompt: "think", Ask: true}, func(ev core.Event) {
		if ev.Kind == core.EventSession && session == "" {
			session = ev.ResumeToken
			go func() {
				<-model.Arrived() // the model is working on the turn
				cancel()
			}()
		}
	})
	if err == nil {
		t.Fatalf("Run = %+v, want the cancellation", res)
	}
	var texts strings.Builder
	res, err = p.Run(context.Background(), core.Turn{Workdir: workdir, Prompt: "go on", ResumeToken: session, Ask: true}, func(ev core.Event) {
		if ev.Kind == core.EventText {
			texts.WriteString(ev.Text)
		}
	})
	if err != nil || !strings.Contains(texts.String(), "Continuing.") {
		t.Fatalf("resumed turn = %+v, %v, %q", res, err, texts.String())
	}
	reqs := model.Requests()
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

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

// A warm CLI, started resumed before its message exists, answers the
// message from the session; one whose session changed meanwhile says so.
func TestWarmTurn(t *testing.T) {
	t.Parallel()
	model := plugintest.NewAnthropic(t, plugintest.Reply{Text: []string{"First answer."}}, plugintest.Reply{Text: []string{"Second answer."}})
	p, workdir, configDir := askingPluginIn(t, model)
	res, err := p.Run(context.Background(), core.Turn{Workdir: workdir, Prompt: "first", Ask: true}, func(core.Event) {})
	if err != nil || res.ResumeToken == "" {
		t.Fatalf("first turn = %+v, %v", res, err)
	}
	next := core.Turn{Workdir: workdir, ResumeToken: res.ResumeToken, Ask: true}
	if _, err := p.Warm(context.Background(), core.Turn{Workdir: workdir, ResumeToken: res.ResumeToken}); err != core.ErrNoWarm {
		t.Errorf("Warm of a turn that cannot ask = %v, want ErrNoWarm", err)
	}
	w, err := p.Warm(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Fresh() {
		t.Fatal("a warm CLI is stale before anything changed")
	}
	var text strings.Builder
	res2, err := w.Run(context.Background(), withPrompt(next, "second"), func(ev core.Event) {
		if ev.Kind == core.EventText {
			text.WriteString(ev.Text)
		}
	})
	if err != nil || !strings.Contains(text.String(), "Second answer.") {
		t.Fatalf("warm turn = %+v, %v, %q", res2, err, text.String())
	}
	reqs := model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, "first") || !strings.Contains(got, "second") {
		t.Errorf("the warm turn did not continue the session: %q", got)
	}

	stale, err := p.Warm(context.Background(), core.Turn{Workdir: workdir, ResumeToken: res2.ResumeToken, Ask: true})
	if err != nil {
		t.Fatal(err)
	}
	sessions, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", res2.ResumeToken+".jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("session files %v", sessions)
	}
	f, err := os.OpenFile(sessions[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n") // resumed in a terminal meanwhile
	f.Close()
	if stale.Fresh() {
		t.Error("a warm CLI whose session changed is still fresh")
	}
	stale.Close() // and no process outlives the test (askingPlugin checks)
}

func withPrompt(t core.Turn, prompt string) core.Turn {
	t.Prompt = prompt
	return t
}

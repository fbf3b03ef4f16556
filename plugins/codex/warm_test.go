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

// A warm app-server (started, its thread resumed, before the message
// exists) answers the message in that thread; one whose thread grew
// meanwhile is stale; an unused one leaves no process behind.
func TestAppServerWarmTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"First answer."}}, plugintest.Reply{Text: []string{"Second answer."}},
		plugintest.Reply{Text: []string{"Third answer."}})
	_, _, first, err := f.askTurn(context.Background(), "first", "", core.Answer{})
	if err != nil || first.ResumeToken == "" {
		t.Fatalf("first turn = %+v, %v", first, err)
	}
	if _, err := f.plugin.Warm(context.Background(), core.Turn{Workdir: f.workdir, ResumeToken: first.ResumeToken}); err != core.ErrNoWarm {
		t.Errorf("Warm of a turn that cannot ask = %v, want ErrNoWarm", err)
	}
	next := core.Turn{Workdir: f.workdir, Ask: true, ResumeToken: first.ResumeToken}
	w, err := f.plugin.Warm(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Fresh() {
		t.Fatal("a warm app-server is stale before anything changed")
	}
	next.Prompt = "second"
	var text strings.Builder
	res, err := w.Run(context.Background(), next, func(ev core.Event) {
		if ev.Kind == core.EventText {
			text.WriteString(ev.Text)
		}
	})
	if err != nil || text.String() != "Second answer." || res.ResumeToken != first.ResumeToken {
		t.Fatalf("warm turn = %+v, %v, %q; want the answer in thread %s", res, err, text.String(), first.ResumeToken)
	}
	if reqs := f.model.Requests(); !strings.Contains(reqs[len(reqs)-1].Text(), "first") {
		t.Error("the warm turn did not carry the thread's first exchange")
	}

	// The thread grows elsewhere (a terminal resumed it): stale.
	stale, err := f.plugin.Warm(context.Background(), core.Turn{Workdir: f.workdir, Ask: true, ResumeToken: first.ResumeToken})
	if err != nil {
		t.Fatal(err)
	}
	rollouts, _ := filepath.Glob(filepath.Join(f.home, ".codex", "sessions", "*", "*", "*", "rollout-*"+first.ResumeToken+".jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("rollouts of the thread: %q", rollouts)
	}
	fh, err := os.OpenFile(rollouts[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString("\n")
	fh.Close()
	if stale.Fresh() {
		t.Error("a warm app-server whose thread grew is fresh")
	}
	stale.Close() // and no process outlives the test (the fixture checks)
}

package gemini_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Cancelling an asking turn sends session/cancel and ends it, leaving no
// process behind. Stopped before the model answered, the session was
// never saved: the next turn says so and goes on in a new one.
func TestACPCancelThenGoOn(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	f := newFixture(t, plugintest.Reply{Text: []string{"Thinking"}, Hold: hold}, plugintest.Reply{Text: []string{"Continuing."}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.Model.Arrived()
		cancel()
	}()
	tr := f.Ask(ctx, "think hard", "", core.Answer{})
	if tr.Err == nil || tr.Result.ResumeToken == "" {
		t.Fatalf("Run = %+v, %v; want the cancellation and the session", tr.Result, tr.Err)
	}
	next := f.Ask(context.Background(), "go on", tr.Result.ResumeToken, core.Answer{})
	if next.Err != nil || !strings.Contains(next.Text(), "Continuing.") || next.Result.ResumeToken == "" {
		t.Fatalf("next turn = %+v, %v, %q", next.Result, next.Err, next.Text())
	}
}

// A warm CLI for a conversation's first turn (started, its session new,
// before the message exists) answers the message. A resumed turn does
// not run through ACP (see Plugin.asks), so it cannot be warmed.
func TestACPWarmTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"First answer."}})
	p := f.Plugin.(*gemini.Plugin)
	w, err := p.Warm(context.Background(), f.Turn("", "", true))
	if err != nil {
		t.Fatal(err)
	}
	if !w.Fresh() {
		t.Fatal("a warm CLI for a new session is stale")
	}
	var out plugintest.TurnOutput
	out.Result, out.Err = w.Run(context.Background(), f.Turn("first", "", true), func(ev core.Event) { out.Events = append(out.Events, ev) })
	if out.Err != nil || out.Text() != "First answer." || out.Result.ResumeToken == "" {
		t.Fatalf("warm turn = %+v, %v, %q", out.Result, out.Err, out.Text())
	}
	if _, err := p.Warm(context.Background(), f.Turn("", out.Result.ResumeToken, true)); err != core.ErrNoWarm {
		t.Errorf("Warm of a resumed turn = %v, want ErrNoWarm", err)
	}
	unused, err := p.Warm(context.Background(), f.Turn("", "", true))
	if err != nil {
		t.Fatal(err)
	}
	unused.Close() // and no process outlives the test (the fixture checks)
}

package remote_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// heldChecker is an instant plugin whose check of the session id "held"
// waits until released: a turn request that takes long to handle.
type heldChecker struct {
	*plugintest.Scripted
	checking chan struct{}
	release  chan struct{}
}

func (h *heldChecker) CheckSessionID(id string) error {
	if id == "held" {
		h.checking <- struct{}{}
		<-h.release
	}
	return nil
}

// slowChecker is an instant plugin whose check of the session id "slow"
// takes longer than the 10 s the gateway allowed a turn's start.
type slowChecker struct{ *plugintest.Scripted }

func (slowChecker) CheckSessionID(id string) error {
	if id == "slow" {
		time.Sleep(11 * time.Second) // the condition under test, not a wait for something
	}
	return nil
}

// A turn's start waits for the runner as long as the runner is heard: on
// a loaded machine, with 1,000 turns asked at once, some starts took
// longer than the gateway's 10 s request timeout, and those turns failed
// with "runner box1: context deadline exceeded" (issue 33). Here a runner
// takes 11 s to start one.
func TestASlowTurnStartIsWaitedFor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := hop(t, nil, slowChecker{&plugintest.Scripted{Script: instant, Unrecorded: true}}, dir).Plugin("box2", "claude", core.Message{}, true)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	if _, err := p.Run(context.Background(), core.Turn{Workdir: dir, Prompt: "hi", SessionID: "slow"}, func(ev core.Event) { text += ev.Text }); err != nil || text != "ok" {
		t.Errorf("the turn said %q: %v", text, err)
	}
}

// A runner handles turn requests side by side: one slow to start does not
// hold up the next. Handled one after the other, a thousand turns asked at
// once made the last wait past the gateway's request timeout, and they
// failed (issue 33's load curve: 460 of 1,000 replies lost).
func TestARunnerStartsTurnsSideBySide(t *testing.T) {
	t.Parallel()
	plugin := &heldChecker{Scripted: &plugintest.Scripted{Script: instant, Unrecorded: true},
		checking: make(chan struct{}), release: make(chan struct{})}
	dir := t.TempDir()
	p, err := hop(t, nil, plugin, dir).Plugin("box2", "claude", core.Message{}, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, core.Turn{Workdir: dir, Prompt: "first", SessionID: "held"}, func(core.Event) {})
		held <- err
	}()
	<-plugin.checking
	if _, err := p.Run(ctx, core.Turn{Workdir: dir, Prompt: "second"}, func(core.Event) {}); err != nil {
		t.Errorf("a turn asked while another's start was held: %v", err)
	}
	close(plugin.release)
	if err := <-held; err != nil {
		t.Errorf("a held turn: %v", err)
	}
}

// The gateway reads every turn's messages with one consumer of the event
// stream, made once. With a consumer of its own per turn, each turn's
// start waited on a JetStream API request bounded by the gateway's
// request timeout: under load (1,000 turns at once through a runner)
// creating them took longer, and 170 turns failed with "follow turn …:
// context deadline exceeded" (issue 33). Here the server allows a stream
// one consumer, and three turns run at once.
func TestTurnsShareOneConsumer(t *testing.T) {
	t.Parallel()
	const turns = 3
	var all sync.WaitGroup
	all.Add(turns)
	together := func(_ context.Context, _ core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.TextEvent("started"))
		all.Done()
		all.Wait() // until every turn runs
		emit(core.TextEvent("ended"))
		return core.TurnResult{SessionID: "s"}, nil
	}
	opts := &server.Options{}
	opts.JetStreamLimits.DefaultMaxConsumers = 1
	dir := t.TempDir()
	p, err := hop(t, opts, &plugintest.Scripted{Script: together, Unrecorded: true}, dir).Plugin("box2", "claude", core.Message{}, true)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range turns {
		wg.Go(func() {
			var text string
			_, err := p.Run(context.Background(), core.Turn{Workdir: dir, Prompt: "hi"}, func(ev core.Event) { text += ev.Text })
			if err != nil || text != "startedended" {
				t.Errorf("a turn said %q: %v", text, err)
			}
		})
	}
	wg.Wait()
}

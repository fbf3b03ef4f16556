package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
)

// With REACTIONS on, the message of a turn shows its state: running,
// waiting for an answer, and how it ended; a 429 on a reaction neither
// holds the reply nor loses the state, shown once the wait has passed
// (issue 30).
func TestReactionsFollowTheTurn(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		switch turn.Prompt {
		case "fail":
			return core.TurnResult{}, errors.New("the CLI crashed")
		case "ask":
			return asking(ctx, turn, emit)
		}
		return echo(ctx, turn, emit)
	}, clock, func(cfg *core.RouterConfig) { cfg.Reactions, cfg.Ask = true, true })
	var limited atomic.Bool
	f.rec.FailReact = func(r platformtest.Reaction) error {
		if r.State == core.ReactionDone && !limited.Swap(true) {
			return &core.RateLimitError{RetryAfter: 5 * time.Second, Err: errors.New("429")}
		}
		return nil
	}
	f.say("alice", "/fake start")
	f.expect("conversation started")
	// until reads reactions until id shows state: a state that passed
	// before the platform was called may be skipped, never a final one.
	until := func(id string, state core.Reaction) {
		t.Helper()
		for {
			var got platformtest.Reaction
			select {
			case got = <-f.rec.Reacted():
			case d := <-clock.Waiting():
				clock.Advance(d)
				continue
			}
			if got.MessageID == id && got.State == state {
				return
			}
			if got.MessageID != id || got.State >= core.ReactionDone {
				t.Fatalf("reaction %+v, want %v on %s", got, state, id)
			}
		}
	}
	for _, tc := range []struct {
		id, text string
		end      core.Reaction
	}{
		{"m1", "hi", core.ReactionDone},
		{"m2", "fail", core.ReactionFailed},
		{"m3", "ask", core.ReactionDone},
	} {
		f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"}, ID: tc.id, Text: tc.text})
		if tc.text == "ask" {
			f.expect("❓ Allow Bash?")
			until(tc.id, core.ReactionWaiting)
			f.say("alice", "y")
			f.expect("Allowed Bash") // running again, maybe too briefly to show
		}
		f.next() // the reply, whatever its reaction waits for
		until(tc.id, tc.end)
		f.router.Wait()
	}
	if !limited.Load() {
		t.Error("no reaction was rate limited")
	}
}

package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// backgrounded is a turn that answers with a background job still
// running, as Claude Code's run_in_background: it tells answered, then
// waits for finish to report the job's end and its follow-up answer.
func backgrounded(answered, finish chan struct{}) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		job := []string{"Slow background job"}
		emit(core.Event{Kind: core.EventBackground, Background: &core.Background{Tasks: job}})
		emit(core.TextEvent("It runs in the background."))
		emit(core.Event{Kind: core.EventBackground, Background: &core.Background{Tasks: job, Answered: true}})
		answered <- struct{}{}
		select {
		case <-finish:
			emit(core.Event{Kind: core.EventBackground, Background: &core.Background{Answered: true}})
			emit(core.TextEvent("\n\nThe job finished: bgdone."))
			return core.TurnResult{SessionID: "tok"}, nil
		case <-ctx.Done():
			return core.TurnResult{}, ctx.Err()
		}
	}
}

// A turn that answered with background work running stays open for it:
// /status lists the work, and what the CLI reports when it ends is the
// rest of the reply; past BACKGROUND_LIMIT, or at /stop, the turn ends
// and the reply says why.
func TestBackgroundWorkKeepsTheTurnOpen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(f *routerFixture, finish chan struct{}, timers *coretest.ManualClock)
		want []string
		// also is another message the bot writes, before the reply or
		// after it.
		also string
	}{
		{"the work ends", func(f *routerFixture, finish chan struct{}, _ *coretest.ManualClock) { finish <- struct{}{} },
			[]string{"It runs in the background.", "✓ Background work ended: 1 task — Slow background job", "The job finished: bgdone."}, ""},
		{"the limit passes", func(f *routerFixture, _ chan struct{}, timers *coretest.ManualClock) {
			for d := range timers.Waiting() {
				if d == time.Hour {
					break
				}
			}
			timers.Advance(time.Hour)
		}, []string{"⏳ Background: 1 task — Slow background job", "Background work stopped with the turn: it still ran 1h0m0s after the answer (BACKGROUND_LIMIT)"}, ""},
		{"/stop", func(f *routerFixture, _ chan struct{}, _ *coretest.ManualClock) {
			f.say("alice", "/stop")
		}, []string{"It runs in the background.", "Stopped."}, "Stopping the running turn."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answered, finish := make(chan struct{}), make(chan struct{})
			timers := coretest.NewManualClock()
			f := newRouterFixtureWith(t, backgrounded(answered, finish), nil, func(cfg *core.RouterConfig) {
				cfg.Timers, cfg.BackgroundLimit = timers, time.Hour
			})
			f.say("alice", "/fake start")
			f.expect("conversation started")
			f.say("alice", "start the job")
			<-answered
			f.say("alice", "/status")
			f.expect("State: running a turn, 0 queued, background: 1 task — Slow background job")
			tc.end(f, finish, timers)
			var reply string
			for reply == "" || tc.also != "" {
				switch got := f.next(); {
				case strings.Contains(got, "It runs in the background."):
					reply = got
				case tc.also != "" && strings.Contains(got, tc.also):
					tc.also = ""
				default:
					t.Fatalf("bot wrote %q, want the reply", got)
				}
			}
			for _, want := range tc.want {
				if !strings.Contains(reply, want) {
					t.Errorf("the reply %q lacks %q", reply, want)
				}
			}
			f.router.Wait()
			f.say("alice", "/status")
			f.expect("State: idle")
		})
	}
}

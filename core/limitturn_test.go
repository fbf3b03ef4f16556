package core_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// refusedOnce refuses its first turn for a used-up five-hour window that
// resets an hour after Epoch, as Claude Code does (a rejected window,
// then an error result), after some work when cut; it echoes the rest.
func refusedOnce(cut bool) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	var calls atomic.Int32
	return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		if calls.Add(1) > 1 {
			emit(core.TextEvent("echo: " + t.Prompt))
			return core.TurnResult{SessionID: "s1"}, nil
		}
		if cut {
			emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash", Text: "make"}))
		}
		emit(core.LimitEvent(core.UsageWindow{Window: "5h", UsedPercent: 100, ResetsAt: coretest.Epoch.Add(time.Hour), Rejected: true}))
		emit(core.ErrorEvent("You've hit your 5-hour limit · resets 4:04am (UTC)"))
		return core.TurnResult{SessionID: "s1", IsError: true}, nil
	}
}

// A turn refused by a usage window goes on by itself at the reset: the
// chat is told, the continuation is a schedule (listed, removable) that
// sends the message again, or "continue" for a turn cut part-way.
func TestARefusedTurnContinuesAtTheReset(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		cut      bool
		cancel   bool
		sent     string
		schedule string
	}{
		{"refused at once", false, false, "fix the bug", "fix the bug"},
		{"cut part-way", true, false, "continue", "continue"},
		{"cancelled", false, true, "", "fix the bug"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := coretest.NewManualClock()
			f := newRouterFixtureWith(t, refusedOnce(tc.cut), clock, nil)
			f.say("alice", "/fake start")
			f.expect("conversation started")
			f.turn("fix the bug")
			f.expect("🔁 The Fake fake 5h window is used up")
			f.say("alice", "/schedules")
			f.expect("#1 once, when the Fake fake 5h window resets, next at 2026-01-02 04:04 UTC, by alice: " + tc.schedule)
			if tc.cancel {
				f.say("alice", "/unschedule 1")
				f.expect("Removed schedule #1.")
				clock.Advance(time.Hour)
				f.say("alice", "/schedules")
				f.expect("Nothing is scheduled here.")
				return
			}
			clock.Advance(time.Hour)
			f.expect("⏰ Schedule #1 (once, when the Fake fake 5h window resets) sends: " + tc.sent)
			if got := <-f.plugin.Started(); got.Prompt != tc.sent || got.Key.User != "alice" {
				t.Errorf("the continuation ran %+v, want %q from alice", got, tc.sent)
			}
			f.expect("echo: " + tc.sent)
		})
	}
}

// The chat hears when the window resets and what will be sent then.
func TestARefusedTurnSaysWhenItGoesOn(t *testing.T) {
	t.Parallel()
	for _, cut := range []bool{false, true} {
		f := newRouterFixtureWith(t, refusedOnce(cut), coretest.NewManualClock(), nil)
		f.say("alice", "/fake start")
		f.expect("conversation started")
		f.say("alice", "fix the bug")
		<-f.plugin.Started()
		if reply := f.next(); !strings.Contains(reply, "hit your 5-hour limit") {
			t.Errorf("cut %v: reply %q, want the CLI's refusal", cut, reply)
		}
		got := f.next()
		want := "🔁 The Fake fake 5h window is used up; it resets at 04:04 UTC (in 1h0m0s): this message will be sent again then, in this conversation (schedule #1). /unschedule 1 cancels it."
		if cut {
			want = strings.Replace(want, "this message will be sent again then", `"continue" will be sent then, to pick the turn up where it stopped`, 1)
		}
		if !strings.Contains(got, want) {
			t.Errorf("cut %v: reply %q, want %q", cut, got, want)
		}
	}
}

// A continuation's Start with <another CLI> now sends the refused message
// at once to a new conversation of that CLI in the same workdir, and the
// continuation is gone; only its author may.
func TestAContinuationStartsWithAnotherCLINow(t *testing.T) {
	t.Parallel()
	for _, cut := range []bool{false, true} {
		other := &plugintest.Scripted{PluginID: "other", PluginName: "Other", Script: echo}
		f := newRouterFixtureWith(t, refusedOnce(cut), coretest.NewManualClock(), func(cfg *core.RouterConfig) {
			fake, _ := cfg.Plugins.Get("fake")
			reg, err := core.NewRegistry(fake, other)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Plugins = reg
		})
		sub := filepath.Join(f.root, "proj")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		f.say("alice", "/fake start proj")
		f.expect("conversation started")
		f.turn("fix the bug")
		f.expect("(schedule #1). /unschedule 1 cancels it; /other now 1 sends it now to Other, in a new conversation here.")
		f.say("bob", "/other now 1")
		f.expect("schedule #1 is someone else's")
		f.say("alice", "/other now 1")
		f.expect("Other conversation started in " + sub)
		if got := <-other.Started(); got.Prompt != "fix the bug" {
			t.Errorf("cut %v: Other got %q, want the refused message", cut, got.Prompt)
		}
		f.expect("echo: fix the bug")
		f.say("alice", "/schedules")
		f.expect("Nothing is scheduled here.")
	}
}

// One user's turns refused by a window go on one after another at the
// reset, in the order they were refused: the second is sent once the
// first has finished (issue 30).
func TestRefusedTurnsOfOneUserContinueInTheirOrder(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	release := make(chan struct{})
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		if calls.Add(1) <= 2 {
			return refusedOnce(false)(ctx, turn, emit)
		}
		<-release
		emit(core.TextEvent("echo: " + turn.Prompt))
		return core.TurnResult{SessionID: "s1"}, nil
	}, clock, nil)
	in := func(channel, text string) {
		f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: channel}, Text: text})
	}
	for _, c := range []struct{ channel, text string }{{"c", "first"}, {"d", "second"}} {
		in(c.channel, "/fake start")
		f.expect("conversation started")
		in(c.channel, c.text)
		<-f.plugin.Started()
		f.expect("hit your 5-hour limit")
		f.expect("🔁 The Fake fake 5h window is used up")
	}
	clock.Advance(time.Hour)
	f.expect("⏰ Schedule #1")
	if got := <-f.plugin.Started(); got.Prompt != "first" {
		t.Fatalf("the first continuation sent %q, want first", got.Prompt)
	}
	release <- struct{}{}
	f.expect("echo: first")
	// Its end armed the held-back continuation, due already: it goes
	// when the clock next moves, as a real timer's would at once.
	f.router.Wait()
	clock.Advance(0)
	f.expect("⏰ Schedule #2")
	if got := <-f.plugin.Started(); got.Prompt != "second" {
		t.Fatalf("the second continuation sent %q, want second", got.Prompt)
	}
	release <- struct{}{}
	f.expect("echo: second")
}

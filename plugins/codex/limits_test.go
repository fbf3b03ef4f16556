package codex_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestUsageWindows: the real app-server turns the backend's
// x-codex-primary-* and x-codex-secondary-* headers into
// account/rateLimits/updated, which the plugin reports as the five-hour
// and weekly windows (usedPercent rounded by Codex: 42.5 is 43).
func TestUsageWindows(t *testing.T) {
	t.Parallel()
	five, week := time.Unix(1795719135, 0).UTC(), time.Unix(1795974735, 0).UTC()
	f := newFixture(t, plugintest.Reply{Text: []string{"Done."}, Headers: plugintest.CodexLimits(42.5, 7, five, week)})
	out := f.Run(context.Background(), "go on", "")
	if out.Err != nil || out.Result.IsError {
		t.Fatalf("turn failed: %v %+v", out.Err, out.Result)
	}
	var got []core.UsageWindow
	for _, ev := range out.Events {
		if ev.Kind == core.EventLimit {
			got = append(got, *ev.Limit)
		}
	}
	want := []core.UsageWindow{{Window: "5h", UsedPercent: 43, ResetsAt: five}, {Window: "weekly", UsedPercent: 7, ResetsAt: week}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("windows = %+v, want %+v", got, want)
	}
}

// TestUsageWindowUsedUp: a request refused with a 429 usage_limit_reached
// ends the turn with Codex's "You've hit your usage limit", and the
// five-hour window it reports at 100 % is the one that refused it.
func TestUsageWindowUsedUp(t *testing.T) {
	t.Parallel()
	five, week := time.Unix(1795719135, 0).UTC(), time.Unix(1795974735, 0).UTC()
	f := newFixture(t, plugintest.Reply{Status: 429, ErrorType: "usage_limit_reached", Message: "The usage limit has been reached",
		Headers: plugintest.CodexLimits(100, 50, five, week)})
	out := f.Run(context.Background(), "go on", "")
	if !out.Result.IsError || len(out.Blocks(core.BlockError)) == 0 || !strings.Contains(out.Blocks(core.BlockError)[0].Text, "usage limit") {
		t.Errorf("result %+v, errors %+v: want the turn failed for the usage limit", out.Result, out.Blocks(core.BlockError))
	}
	var got []core.UsageWindow
	for _, ev := range out.Events {
		if ev.Kind == core.EventLimit {
			got = append(got, *ev.Limit)
		}
	}
	want := []core.UsageWindow{{Window: "5h", UsedPercent: 100, ResetsAt: five, Rejected: true}, {Window: "weekly", UsedPercent: 50, ResetsAt: week}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("windows = %+v, want %+v", got, want)
	}
}

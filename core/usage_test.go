package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// reporting answers each turn after reporting the windows its prompt
// names: "5h=91" is the five-hour window used 91 %.
func reporting(reset time.Time) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		for _, f := range strings.Fields(t.Prompt) {
			name, used, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			w := core.UsageWindow{Window: name, ResetsAt: reset, UsedPercent: -1}
			if used == "rejected" {
				w.Rejected = true
			} else {
				w.UsedPercent = atoi(used)
			}
			emit(core.LimitEvent(w))
		}
		emit(core.TextEvent("done"))
		return core.TurnResult{SessionID: "s1"}, nil
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// The windows a CLI reports are warned of in the reply past LIMIT_WARN
// (80 % by default), and /limits lists the latest of each.
func TestUsageWindowsWarnAndList(t *testing.T) {
	t.Parallel()
	reset := time.Date(2026, 1, 2, 4, 40, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		warn   int
		prompt string
		want   []string
		not    []string
	}{
		{"below", 0, "go 5h=79 weekly=10", nil, []string{"window"}},
		{"past the default", 0, "go 5h=91 weekly=10", []string{"Fake fake 5h window 91 % · resets 04:40 UTC"}, []string{"weekly window"}},
		{"past a lower warn", 50, "go 5h=60", []string{"Fake fake 5h window 60 % · resets 04:40 UTC"}, nil},
		{"refused", 0, "go 5h=rejected", []string{"Fake fake 5h window used up · resets 04:40 UTC"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRouterFixtureWith(t, reporting(reset), nil, func(cfg *core.RouterConfig) { cfg.LimitWarn = tc.warn })
			f.say("alice", "/fake start")
			f.expect("conversation started")
			f.say("alice", tc.prompt)
			got := f.next()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("reply %q, want %q", got, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("reply %q, want no %q", got, w)
				}
			}
		})
	}
}

func TestLimitsListsTheLatestWindows(t *testing.T) {
	t.Parallel()
	reset := coretest.Epoch.Add(3 * 24 * time.Hour)
	f := newRouterFixtureWith(t, reporting(reset), nil, nil)
	f.say("alice", "/limits")
	f.expect("No CLI has reported a usage window yet")
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.turn("go 5h=40 weekly=10")
	f.turn("go 5h=45") // a sparse update keeps the weekly window
	f.say("bob", "/limits")
	f.expect("Usage windows, as the CLIs last reported them:\n• Fake fake 5h window 45 % · resets Mon 5 Jan 03:04 UTC\n• Fake fake weekly window 10 % · resets Mon 5 Jan 03:04 UTC")
}

package gemini_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// The real CLI gives up at once on a quota error (a 429
// RESOURCE_EXHAUSTED) whose retry is more than five minutes away, and the
// turn reports the "quota" window used up until then, so the router
// continues it at that time (issue 30). A shorter retry the CLI waits out
// itself: the turn only takes longer.
func TestQuotaRefusalIsAUsageWindow(t *testing.T) {
	t.Parallel()
	for _, ask := range []bool{false, true} {
		t.Run(map[bool]string{false: "one-shot", true: "acp"}[ask], func(t *testing.T) {
			t.Parallel()
			quotaRefusal(t, ask)
		})
	}
}

func quotaRefusal(t *testing.T, ask bool) {
	f := newFixture(t, plugintest.Reply{Status: 429,
		Message: "You exceeded your current quota, please check your plan and billing details. Please retry in 3600s."})
	before := time.Now()
	tr := plugintest.RunTurn(context.Background(), t, f.Plugin, f.Turn("say hello", "", ask))
	if tr.Err == nil && !tr.Result.IsError {
		t.Fatalf("Run = %+v, %v; want a failed turn", tr.Result, tr.Err)
	}
	var windows []core.UsageWindow
	for _, ev := range tr.Events {
		if ev.Kind == core.EventLimit && ev.Limit != nil {
			windows = append(windows, *ev.Limit)
		}
	}
	if len(windows) != 1 || windows[0].Window != "quota" || !windows[0].Rejected ||
		windows[0].ResetsAt.Before(before.Add(time.Hour-time.Second)) || windows[0].ResetsAt.After(time.Now().Add(time.Hour)) {
		t.Fatalf("windows %+v, want the quota used up for an hour", windows)
	}
	if errs := tr.Blocks(core.BlockError); len(errs) == 0 || !strings.Contains(errs[0].Text, "exceeded your current quota") {
		t.Errorf("errors %+v, want the API's", errs)
	}
}

package claude_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// limitEvents returns the usage windows a turn reported.
func limitEvents(o plugintest.TurnOutput) []core.UsageWindow {
	var out []core.UsageWindow
	for _, ev := range o.Events {
		if ev.Kind == core.EventLimit && ev.Limit != nil {
			out = append(out, *ev.Limit)
		}
	}
	return out
}

// TestUsageWindows: the real CLI, signed in with a subscription token,
// turns the API's anthropic-ratelimit-unified-* headers into usage
// windows: where the five-hour window stands, then its refusal (a 429 the
// CLI does not retry), which ends the turn as an error.
func TestUsageWindows(t *testing.T) {
	t.Parallel()
	bin := plugintest.CLIPath(t, "claude")
	// Ahead of the real time: the CLI reports no refusal whose reset
	// has passed.
	reset := time.Now().Add(5 * time.Hour).Truncate(time.Second).UTC()
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"Done."}, Headers: plugintest.UnifiedLimit(0.91, reset)},
		plugintest.UnifiedRejected(reset))
	f := plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return claude.New(claude.Config{PermissionMode: "default", ConfigDir: filepath.Join(home, ".claude"),
			Settings: cliproc.Settings{Bin: bin, Env: append(plugintest.SubscriptionEnv(plugintest.ClaudeEnv(t, model, home)), mark)}}, nil)
	})
	tests := []struct {
		name    string
		want    core.UsageWindow
		isError bool
	}{
		{"warning", core.UsageWindow{Window: "5h", UsedPercent: 91, ResetsAt: reset}, false},
		{"refusal", core.UsageWindow{Window: "5h", UsedPercent: 100, ResetsAt: reset, Rejected: true}, true},
	}
	for _, tt := range tests {
		out := f.Run(context.Background(), "go on", "")
		got := limitEvents(out)
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: windows = %+v, want [%+v]", tt.name, got, tt.want)
		}
		if out.Result.IsError != tt.isError {
			t.Errorf("%s: IsError = %v, want %v", tt.name, out.Result.IsError, tt.isError)
		}
	}
}

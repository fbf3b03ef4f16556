package bot_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/bot"
)

// The console shares the terminal with the logs: unless LOG_LEVEL says
// otherwise, only warnings and errors reach stderr.
func TestConsoleLogLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level   string
		started bool
	}{
		{"", false},
		{"info", true},
		{"warn", false},
	} {
		t.Run("LOG_LEVEL="+tc.level, func(t *testing.T) {
			t.Parallel()
			cfg := bot.Config{AllowedRoots: []string{t.TempDir()}, LogLevel: tc.level}
			cfg.Claude.Bin = "jakebot-no-such-claude"
			var logs strings.Builder
			if err := bot.Run(context.Background(), cfg, bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: &logs}); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := strings.Contains(logs.String(), "jakebot started"); got != tc.started {
				t.Errorf("info line logged = %v, want %v:\n%s", got, tc.started, logs.String())
			}
		})
	}
}

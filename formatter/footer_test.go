package formatter_test

import (
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
)

// A footer shows the turn's cost in dollars where the CLI reports it, and
// its tokens where it reports only those (Codex, Gemini CLI).
func TestFooterText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		block core.ResponseBlock
		want  string
	}{
		{"cost", core.ResponseBlock{Duration: 12340 * time.Millisecond, CostUSD: 0.0421, InputTokens: 900, OutputTokens: 80}, "12.3s · $0.0421"},
		{"tokens only", core.ResponseBlock{Duration: 95 * time.Second, InputTokens: 12_040, OutputTokens: 310}, "1m35s · 12.0k in / 310 out tokens"},
		{"nothing reported", core.ResponseBlock{Duration: time.Second}, "1.0s"},
		{"context", core.ResponseBlock{Duration: time.Second, CostUSD: 0.01, ContextPercent: 62}, "1.0s · $0.0100 · ctx 62%"},
		{"context crowded", core.ResponseBlock{Duration: time.Second, ContextPercent: 91}, "1.0s · ctx 91% (//compact frees it)"},
		{"context unknown", core.ResponseBlock{Duration: time.Second, ContextPercent: -1}, "1.0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.block.Kind = core.BlockFooter
			if got := formatter.FooterText(tc.block); got != tc.want {
				t.Errorf("FooterText(%+v) = %q, want %q", tc.block, got, tc.want)
			}
		})
	}
}

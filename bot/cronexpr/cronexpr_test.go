package cronexpr_test

import (
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot/cronexpr"
)

func TestParse(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC) // a Friday
	for _, tc := range []struct {
		expr string
		want time.Time // zero: an error
	}{
		{"0 9 * * 1-5", time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)},
		{"30 8 * * 1", time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)},
		{"@daily", time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)},
		{"@hourly", time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)},
		{"61 * * * *", time.Time{}},
		{"* * *", time.Time{}},
		{"@sometimes", time.Time{}},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			c, err := cronexpr.Parse(tc.expr)
			if tc.want.IsZero() {
				if err == nil {
					t.Errorf("Parse(%q) = %v, want an error", tc.expr, c.Next(from))
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.expr, err)
			}
			if got := c.Next(from); !got.Equal(tc.want) {
				t.Errorf("Parse(%q).Next(%v) = %v, want %v", tc.expr, from, got, tc.want)
			}
		})
	}
}

package formatter_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
)

// BenchmarkRenderLongReply renders, as every edit does, a reply after a
// CLI printed 64 MiB: the cost stays that of the reply's bounded head and
// tail, not of the output.
func BenchmarkRenderLongReply(b *testing.B) {
	clock := coretest.NewManualClock()
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	r := core.NewStreamCoordinator(rec, clock, nil).NewReply(context.Background(), core.Target{Platform: "fake", Channel: "c"})
	defer r.Close(context.Background())
	chunk := strings.Repeat("a log line with *some* `markup` & <html>\n", 100)
	for n := 0; n < 64<<20; n += len(chunk) {
		r.Emit(core.TextEvent(chunk))
	}
	b.ReportAllocs()
	for b.Loop() {
		pages := formatter.Telegram(r.Blocks(), 4096)
		if len(pages) == 0 {
			b.Fatal("no pages")
		}
	}
	b.ReportMetric(float64(64), "MiB-output")
}

package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
)

// An answer longer than LONG_REPLY_PAGES messages stays that many
// messages, its first pages and a note, and comes whole as a file; a
// shorter one, or one on a platform without files, streams as before.
func TestLongReplyComesAsAFile(t *testing.T) {
	t.Parallel()
	var answer strings.Builder
	for i := range 120 {
		fmt.Fprintf(&answer, "line %d of a long answer\n", i)
	}
	tests := []struct {
		name      string
		text      string
		pages     int
		wantFile  bool
		wantPages int
	}{
		{name: "long", text: answer.String(), pages: 4, wantFile: true, wantPages: 4},
		{name: "short", text: "a short answer", pages: 4, wantPages: 1},
		{name: "off", text: answer.String(), pages: 0, wantPages: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := coretest.NewInstantClock()
			rec := platformtest.NewRecorder(clock, core.Limits{EditInterval: time.Second})
			rec.MaxLen = 400
			coord := core.NewStreamCoordinator(rec, clock, nil)
			core.SetLongReplies(coord, tt.pages, formatter.MarkdownText)
			ctx := context.Background()
			r := coord.NewReply(ctx, target)
			for line := range strings.Lines(tt.text) {
				r.Emit(core.TextEvent(line))
			}
			r.Close(ctx)
			msgs := rec.Messages()
			if len(msgs) != tt.wantPages {
				t.Fatalf("%d messages, want %d:\n%s", len(msgs), tt.wantPages, strings.Join(msgs, "\n----\n"))
			}
			select {
			case f := <-rec.Files():
				if !tt.wantFile {
					t.Fatalf("sent file %s, want none", f.Name)
				}
				if f.Name != "answer.md" || string(f.Data) != strings.TrimSpace(tt.text) {
					t.Errorf("file %s = %q, want the whole answer", f.Name, f.Data)
				}
				if !strings.HasPrefix(msgs[0], "line 0 of") || !strings.Contains(msgs[3], "all of it is in answer.md") {
					t.Errorf("messages = %q, want the first pages and the note", msgs)
				}
			default:
				if tt.wantFile {
					t.Fatal("no file sent")
				}
			}
		})
	}
}

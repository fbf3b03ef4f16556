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

// An answer longer than LONG_REPLY_PAGES messages takes two messages, its
// first page and a note, and comes whole as a file: while it streams, the
// second message shows the page being written. One no longer than that
// ends as all its pages; on a platform without files, or with the setting
// off, every page is a message.
func TestLongReplyComesAsAFile(t *testing.T) {
	t.Parallel()
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "line %d of a long answer\n", i)
		}
		return b.String()
	}
	answer := lines(120)
	tests := []struct {
		name      string
		text      string
		pages     int
		wantFile  bool
		wantPages int
	}{
		{name: "long", text: answer, pages: 4, wantFile: true, wantPages: 2},
		{name: "short", text: "a short answer", pages: 4, wantPages: 1},
		{name: "three pages of four", text: lines(40), pages: 4, wantPages: 3},
		{name: "off", text: answer, pages: 0, wantPages: 8},
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
				if !strings.HasPrefix(msgs[0], "line 0 of") || msgs[1] != "📎 The answer ran to 8 messages: the first is above, and all of it is in answer.md." {
					t.Errorf("messages = %q, want the first page and the note", msgs)
				}
			default:
				if tt.wantFile {
					t.Fatal("no file sent")
				}
				// Every page, in order, whatever the second message showed
				// while the answer streamed.
				if got := strings.Join(msgs, "\n"); got != strings.TrimSpace(tt.text) {
					t.Errorf("messages = %q, want the whole answer in order", msgs)
				}
			}
		})
	}
}

// While an answer streams past two pages, the second message shows the
// page being written; an answer that ends no longer than LONG_REPLY_PAGES
// then gets all its pages.
func TestALongReplyStreamsInTwoMessages(t *testing.T) {
	t.Parallel()
	clock := coretest.NewInstantClock()
	rec := platformtest.NewRecorder(clock, core.Limits{EditInterval: time.Second})
	rec.MaxLen = 400
	coord := core.NewStreamCoordinator(rec, clock, nil)
	core.SetLongReplies(coord, 4, formatter.MarkdownText)
	ctx := context.Background()
	r := coord.NewReply(ctx, target)
	var text strings.Builder
	for i := range 40 {
		fmt.Fprintf(&text, "line %d of a long answer\n", i)
		r.Emit(core.TextEvent(fmt.Sprintf("line %d of a long answer\n", i)))
	}
	for c := range rec.Written() {
		if strings.Contains(c.Text, "line 39 of") {
			break
		}
	}
	if msgs := rec.Messages(); len(msgs) != 2 || !strings.HasPrefix(msgs[0], "line 0 of") || !strings.HasSuffix(msgs[1], "line 39 of a long answer") {
		t.Fatalf("while streaming, messages = %q, want the first page and the page being written", msgs)
	}
	r.Close(ctx)
	if got := strings.Join(rec.Messages(), "\n"); got != strings.TrimSpace(text.String()) {
		t.Errorf("messages = %q, want the whole answer in order", rec.Messages())
	}
}

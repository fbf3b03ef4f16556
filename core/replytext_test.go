package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
)

// finalOnly is a reply that delivers nothing until it is closed, so a
// test reads its blocks as the renderer would.
func finalOnly(t *testing.T) *core.Reply {
	t.Helper()
	clock := coretest.NewManualClock()
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	r := core.NewStreamCoordinator(rec, clock, nil).NewReply(context.Background(), target)
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func blocksSize(blocks []core.ResponseBlock) int {
	n := 0
	for _, b := range blocks {
		n += len(b.Text) + len(b.Detail)
	}
	return n
}

// A reply rendered on every edit must not grow with the CLI's output: it
// keeps the head and the tail, and says how much it cut.
func TestReplyKeepsABoundedHeadAndTail(t *testing.T) {
	t.Parallel()
	const total = 16 << 20
	r := finalOnly(t)
	var all strings.Builder
	bound := core.ReplyHeadBytes + 2*core.ReplyTailBytes + 1024
	for i := 0; all.Len() < total; i++ {
		// Lines of two-byte runes, so that a cut in the middle of one
		// would show as invalid UTF-8.
		line := fmt.Sprintf("line %07d: %s\n", i, strings.Repeat("é", 20))
		all.WriteString(line)
		r.Emit(core.TextEvent(line))
		if i%4096 == 0 {
			if n := blocksSize(r.Blocks()); n > bound {
				t.Fatalf("after %d bytes of output the reply holds %d bytes, want at most %d", all.Len(), n, bound)
			}
		}
	}
	r.Add(core.ResponseBlock{Kind: core.BlockFooter, Text: "done"})
	blocks := r.Blocks()
	if n := blocksSize(blocks); n > bound {
		t.Fatalf("the reply holds %d bytes, want at most %d", n, bound)
	}
	full := all.String()
	var cuts int
	for i, b := range blocks {
		if !utf8.ValidString(b.Text) {
			t.Errorf("block %d is not valid UTF-8 at its ends: %q … %q", i, b.Text[:8], b.Text[len(b.Text)-8:])
		}
		if b.Kind == core.BlockWarning && strings.Contains(b.Text, "of output cut here") {
			cuts++
			if !strings.HasPrefix(full, blocks[i-1].Text) || !strings.HasSuffix(full, blocks[i+1].Text) {
				t.Errorf("the blocks around the cut are not the output's head and tail")
			}
			if !strings.Contains(b.Text, " MB of output") {
				t.Errorf("cut note %q does not say how much", b.Text)
			}
		}
	}
	if cuts != 1 {
		t.Errorf("%d cut notes, want 1", cuts)
	}
	if last := blocks[len(blocks)-1]; last.Kind != core.BlockFooter {
		t.Errorf("last block = %v, want the footer", last.Kind)
	}
}

func TestReplyBoundsBlocksAndKeepsReplacingThem(t *testing.T) {
	t.Parallel()
	r := finalOnly(t)
	huge := strings.Repeat("x", 4*core.ReplyTailBytes)
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, ID: "t1", Tool: "Bash", Status: core.ToolRunning})
	r.Emit(core.TextEvent(strings.Repeat("head ", core.ReplyHeadBytes/5)))
	r.Add(core.ResponseBlock{Kind: core.BlockCode, Text: huge})
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, ID: "t2", Tool: "Read", Status: core.ToolRunning})
	// Both tool lines move to done: the first sits in the head, the
	// second in the tail.
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, ID: "t1", Tool: "Bash", Status: core.ToolDone})
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, ID: "t2", Tool: "Read", Status: core.ToolDone, Detail: huge})
	blocks := r.Blocks()
	var tools []string
	for _, b := range blocks {
		if b.Kind != core.BlockText && (len(b.Text) > core.ReplyTailBytes || len(b.Detail) > core.ReplyTailBytes) {
			t.Errorf("a %v block holds %d+%d bytes, want each field within %d", b.Kind, len(b.Text), len(b.Detail), core.ReplyTailBytes)
		}
		if b.Kind == core.BlockToolUse {
			tools = append(tools, b.ID+":"+string(b.Status))
		}
	}
	if got := strings.Join(tools, " "); got != "t1:done t2:done" {
		t.Errorf("tool lines = %s, want each replaced in place", got)
	}
}

// Output within the head and the tail's slack is shown whole, in one block.
func TestReplyJustOverTheHeadIsWhole(t *testing.T) {
	t.Parallel()
	for _, first := range []int{0, 10, core.ReplyHeadBytes} {
		r := finalOnly(t)
		if first > 0 {
			r.Emit(core.TextEvent(strings.Repeat("a", first)))
		}
		r.Emit(core.TextEvent(strings.Repeat("b", 2*core.ReplyTailBytes)))
		blocks := r.Blocks()
		if len(blocks) != 1 || len(blocks[0].Text) != first+2*core.ReplyTailBytes {
			t.Errorf("after %d+%d bytes: %d blocks, want one with every byte", first, 2*core.ReplyTailBytes, len(blocks))
		}
	}
}

// A file edit's diff takes its tool line's place; a block of another
// kind with the same id does not.
func TestReplyDiffReplacesItsToolLine(t *testing.T) {
	t.Parallel()
	r := finalOnly(t)
	r.Add(core.ResponseBlock{Kind: core.BlockToolUse, ID: "e1", Tool: "Edit", Text: "a.go", Status: core.ToolRunning})
	r.Add(core.ResponseBlock{Kind: core.BlockStatus, ID: "e2", Text: "Thinking…"})
	r.Add(core.ResponseBlock{Kind: core.BlockDiff, ID: "e1", Path: "a.go", Action: "update", Text: "@@\n-a\n+b\n"})
	r.Add(core.ResponseBlock{Kind: core.BlockDiff, ID: "e2", Path: "b.go", Action: "update", Text: "@@\n-a\n+b\n"})
	var got []string
	for _, b := range r.Blocks() {
		got = append(got, b.Kind.String()+":"+b.ID)
	}
	if strings.Join(got, " ") != "diff:e1 status:e2 diff:e2" {
		t.Errorf("blocks = %v, want the diff in its tool line's place and the status kept", got)
	}
}

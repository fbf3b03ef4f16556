package core

import (
	"fmt"
	"unicode/utf8"
)

// A reply keeps at most the first ReplyHeadBytes and the last
// ReplyTailBytes of its blocks' text, with a note of how much was cut in
// between: a CLI printing a 64 MiB log must not make every edit render
// 64 MiB. Both are more than a reply's MaxPages of messages show on any
// platform, so a cut never hides what would have been shown.
const (
	ReplyHeadBytes = 256 << 10
	ReplyTailBytes = 64 << 10
)

// replyBlocks is a reply's blocks, bounded: head holds blocks until it is
// full, then every later block goes to tail, which drops its oldest bytes
// once it holds twice its limit (so that trimming costs amortised O(1) per
// byte). The last block's text grows in open while deltas stream in.
//
// Text is redacted as it comes in, before any cut: a cut must not leave
// half a secret for the redaction of the rendered reply to miss, and the
// end of streamed text that may be a secret's beginning waits in held.
type replyBlocks struct {
	redact *Redactor
	// held is streamed text not yet shown: the beginning of a secret,
	// perhaps. It joins the reply once later text (or the end) decides.
	held string

	head, tail         []ResponseBlock
	headSize, tailSize int
	headFull           bool
	cut                int // bytes dropped between head and tail
	// split says the tail's first block continues the head's last text
	// block: shown as one block until something is cut between them.
	split bool
	// open is the text of the last block (of tail when headFull), kept
	// as bytes while text deltas are appended to it.
	open    []byte
	hasOpen bool
}

// last returns the list new content goes to.
func (b *replyBlocks) last() *[]ResponseBlock {
	if b.headFull {
		return &b.tail
	}
	return &b.head
}

// endsInText reports whether the last block is text that a delta extends.
func (b *replyBlocks) endsInText() bool {
	l := *b.last()
	return len(l) > 0 && l[len(l)-1].Kind == BlockText
}

// continuesText reports whether the next delta continues text: the last
// block's, or text held back.
func (b *replyBlocks) continuesText() bool { return b.held != "" || b.endsInText() }

// release adds the text held back: the stream moved on without making it
// a secret.
func (b *replyBlocks) release() {
	if held := b.held; held != "" {
		b.held = ""
		b.appendShown(held)
	}
}

// closeOpen moves the streamed text into its block.
func (b *replyBlocks) closeOpen() {
	if !b.hasOpen {
		return
	}
	l := *b.last()
	l[len(l)-1].Text = string(b.open)
	b.open, b.hasOpen = nil, false
}

// appendText adds a text delta, redacted, holding back its end when
// that may be the beginning of a secret.
func (b *replyBlocks) appendText(s string) {
	if b.redact != nil {
		s, b.held = b.redact.hold(b.held + s)
	}
	if s != "" {
		b.appendShown(s)
	}
}

// appendShown adds text, starting a text block unless the last block is
// one.
func (b *replyBlocks) appendShown(s string) {
	if !b.endsInText() {
		b.closeOpen()
		*b.last() = append(*b.last(), ResponseBlock{Kind: BlockText})
	}
	if !b.hasOpen {
		l := *b.last()
		b.open, b.hasOpen = append(b.open[:0], l[len(l)-1].Text...), true
	}
	if !b.headFull {
		room := ReplyHeadBytes - b.headSize
		if len(s) <= room {
			b.open = append(b.open, s...)
			b.headSize += len(s)
			return
		}
		at := runeStart(s, room)
		b.open = append(b.open, s[:at]...)
		b.headSize += at
		b.closeOpen()
		b.split = true
		if l := b.head; l[len(l)-1].Text == "" {
			b.head, b.split = l[:len(l)-1], false
		}
		b.headFull = true
		b.tail = append(b.tail, ResponseBlock{Kind: BlockText})
		b.open, b.hasOpen = nil, true
		s = s[at:]
	}
	b.open = append(b.open, s...)
	b.tailSize += len(s)
	b.trim()
}

// put appends b, or replaces the latest block with the same ID and kind.
// It is redacted before clip can cut a secret in two.
func (b *replyBlocks) put(blk ResponseBlock) {
	b.release()
	b.closeOpen()
	blk = b.redact.redactBlock(blk)
	blk.Text = clip(blk.Text)
	blk.Detail = clip(blk.Detail)
	if blk.ID != "" && (b.replace(b.tail, &b.tailSize, blk) || b.replace(b.head, &b.headSize, blk)) {
		b.trim()
		return
	}
	n := blockSize(blk)
	if !b.headFull && b.headSize+n > ReplyHeadBytes {
		b.headFull = true
	}
	if b.headFull {
		b.tail = append(b.tail, blk)
		b.tailSize += n
		b.trim()
		return
	}
	b.head = append(b.head, blk)
	b.headSize += n
}

func (b *replyBlocks) replace(list []ResponseBlock, size *int, blk ResponseBlock) bool {
	for i := len(list) - 1; i >= 0; i-- {
		// A file edit's diff takes the place of its tool line.
		if list[i].ID == blk.ID && (list[i].Kind == blk.Kind || list[i].Kind == BlockToolUse && blk.Kind == BlockDiff) {
			*size += blockSize(blk) - blockSize(list[i])
			list[i] = blk
			return true
		}
	}
	return false
}

// trim drops the tail's oldest bytes once it holds twice its limit,
// keeping the newest ReplyTailBytes (at least the last block).
func (b *replyBlocks) trim() {
	if b.tailSize <= 2*ReplyTailBytes {
		return
	}
	for len(b.tail) > 1 && b.tailSize-blockSize(b.tail[0]) >= ReplyTailBytes {
		b.drop(blockSize(b.tail[0]))
		b.tail = b.tail[1:]
	}
	excess := b.tailSize - ReplyTailBytes
	if excess <= 0 {
		return
	}
	if len(b.tail) == 1 && b.hasOpen {
		at := runeStart(string(b.open[excess:min(len(b.open), excess+utf8.UTFMax)]), 0) + excess
		b.drop(at)
		b.open = append(b.open[:0], b.open[at:]...)
		return
	}
	first := &b.tail[0]
	if excess < len(first.Text) {
		at := excess + runeStart(first.Text[excess:], 0)
		b.drop(at)
		first.Text = first.Text[at:]
	}
}

func (b *replyBlocks) drop(n int) {
	b.tailSize -= n
	b.cut += n
}

// blocks returns a copy of the blocks, with a warning where output was cut.
func (b *replyBlocks) blocks() []ResponseBlock {
	out := make([]ResponseBlock, 0, len(b.head)+len(b.tail)+1)
	out = append(out, b.head...)
	if b.cut > 0 {
		out = append(out, ResponseBlock{Kind: BlockWarning, Text: fmt.Sprintf("… %s of output cut here …", size(int64(b.cut)))})
	}
	out = append(out, b.tail...)
	if b.hasOpen {
		out[len(out)-1].Text = string(b.open)
	}
	if b.split && b.cut == 0 {
		h := len(b.head) - 1
		out[h].Text += out[h+1].Text
		out = append(out[:h+1], out[h+2:]...)
	}
	return out
}

// maxBlockBytes bounds one block (a tool's whole output, say): its end is
// cut with a note.
const maxBlockBytes = ReplyTailBytes / 2

func clip(s string) string {
	if len(s) <= maxBlockBytes {
		return s
	}
	at := runeStart(s, maxBlockBytes)
	return s[:at] + fmt.Sprintf("\n… (%s more)", size(int64(len(s)-at)))
}

func blockSize(b ResponseBlock) int { return len(b.Text) + len(b.Detail) }

// runeStart returns the largest index ≤ i that starts a rune in s, or the
// first rune start at or after i when i is 0 and s starts mid-rune.
func runeStart(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	if i == 0 {
		for i < len(s) && i < utf8.UTFMax && !utf8.RuneStart(s[i]) {
			i++
		}
		return i
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

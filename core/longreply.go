package core

import (
	"fmt"
	"time"
)

// DefaultLongReplyPages is LONG_REPLY_PAGES's default.
const DefaultLongReplyPages = 4

// longPages folds a reply on a platform that sends files, so that a long
// answer takes two messages rather than a stream of them: one longer than
// the coordinator's longPages messages ends as its first page and a note,
// and the whole of it follows as a file when the reply closes
// (attachLong). While it streams past two pages, the second message shows
// the page being written; once the reply closes it becomes the rest of the
// pages, when the answer is short enough, or the note.
func (r *Reply) longPages(pages []string, closed bool) []string {
	n := r.c.longPages
	short := len(pages) <= 2 // nothing to fold while it streams
	if closed {
		short = len(pages) <= n
	}
	if n <= 0 || r.c.document == nil || short {
		return pages
	}
	if _, ok := r.c.platform.(FileSender); !ok {
		return pages
	}
	if !closed {
		r.folded = true
		return []string{pages[0], pages[len(pages)-1]}
	}
	r.long = len(pages)
	note := fmt.Sprintf("📎 The answer ran to %d messages: the first is above, and all of it is in %s.", len(pages), longReplyFile)
	rendered := r.c.platform.Render([]ResponseBlock{{Kind: BlockText, Text: note}})
	if len(rendered) == 0 {
		return pages
	}
	return []string{pages[0], rendered[0]}
}

// longReplyFile is the name a long answer is attached under.
const longReplyFile = "answer.md"

// attachLong sends a long reply's whole answer as a Markdown file, once,
// waiting out the platform's rate limit a few times.
func (r *Reply) attachLong() {
	if r.long == 0 {
		return
	}
	r.long = 0
	fs, ok := r.c.platform.(FileSender)
	if !ok {
		return
	}
	doc := r.c.redact.Redact(r.c.document(r.Blocks()))
	for attempt := 1; ; attempt++ {
		_, err := fs.SendFile(r.ctx, r.target, longReplyFile, []byte(doc), "")
		if err == nil {
			r.c.obs.Delivery(r.target.Platform, DeliverySend)
			return
		}
		rl, limited := AsRateLimit(err)
		if !limited || attempt == maxFailures {
			r.c.obs.Delivery(r.target.Platform, DeliveryFailed)
			r.c.logger.Warn("attach the long answer", "target", r.target.Channel, "err", err)
			return
		}
		r.c.obs.Delivery(r.target.Platform, DeliveryRateLimited)
		if !r.sleep(rl.RetryAfter) {
			return
		}
	}
}

// sleep waits d on the coordinator's clock, or until delivery ends.
func (r *Reply) sleep(d time.Duration) bool {
	woke := make(chan struct{})
	t := r.c.clock.AfterFunc(d, func() { close(woke) })
	select {
	case <-woke:
		return true
	case <-r.ctx.Done():
		t.Stop()
		return false
	}
}

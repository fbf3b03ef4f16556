package core

import (
	"fmt"
	"time"
)

// DefaultLongReplyPages is LONG_REPLY_PAGES's default.
const DefaultLongReplyPages = 4

// longPages keeps a reply that outgrew the coordinator's longPages to
// that many messages: its first pages, which were sent as it streamed
// and are complete, then a note where the rest would go. The whole answer
// follows as a file when the reply closes (attachLong).
func (r *Reply) longPages(pages []string, closed bool) []string {
	n := r.c.longPages
	if n <= 0 || r.c.document == nil || len(pages) <= n {
		return pages
	}
	if _, ok := r.c.platform.(FileSender); !ok {
		return pages
	}
	r.long = len(pages)
	note := fmt.Sprintf("⏳ The answer is long (%d messages so far): the whole of it comes as a file when the turn ends.", len(pages))
	if closed {
		above := "the first is above"
		if n > 2 {
			above = fmt.Sprintf("the first %d are above", n-1)
		}
		note = fmt.Sprintf("📎 The answer ran to %d messages: %s, and all of it is in %s.", len(pages), above, longReplyFile)
	}
	rendered := r.c.platform.Render([]ResponseBlock{{Kind: BlockText, Text: note}})
	if len(rendered) == 0 {
		return pages
	}
	return append(pages[:n-1:n-1], rendered[0])
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

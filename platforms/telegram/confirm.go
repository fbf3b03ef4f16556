package telegram

import (
	"context"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// confirmations tracks which polled updates may be confirmed. Telegram
// confirms every update below a getUpdates offset at once, so the offset
// may only pass an update once the router is done taking it: its handler
// returned, which for a message that starts a turn is once the router
// recorded it (core.LocalTurns), or the adapter dropped it. Until then the
// update stays with Telegram, and a gateway that takes over from a dead
// one gets it again: the router drops it there if the dead one recorded it
// (its chat is told the message was lost), and takes it if not. Updates of
// several chats are handled in parallel, so the offset moves over the
// longest prefix of settled ones. It is safe for concurrent use.
type confirmations struct {
	mu sync.Mutex
	// next is one past the newest update handed on (0: none yet).
	next int
	// open are the updates handed on and not settled yet.
	open map[int]struct{}
	// settled is closed, and replaced, whenever open becomes empty.
	settled chan struct{}
}

func newConfirmations() *confirmations {
	return &confirmations{open: make(map[int]struct{}), settled: make(chan struct{})}
}

// hand reports whether update id is new, and if so holds the offset
// before it until the returned settle is called (once or more). An update
// that comes again because it was not confirmed yet is not new.
func (c *confirmations) hand(id int) (settle func(), isNew bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id < c.next {
		return nil, false
	}
	c.next = id + 1
	c.open[id] = struct{}{}
	return sync.OnceFunc(func() { c.settle(id) }), true
}

func (c *confirmations) settle(id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.open, id)
	if len(c.open) == 0 {
		close(c.settled)
		c.settled = make(chan struct{})
	}
}

// offset is the getUpdates offset that confirms what may be: up to the
// oldest update not settled, or past every update handed on.
func (c *confirmations) offset() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	off := c.next
	for id := range c.open {
		off = min(off, id)
	}
	return off
}

// wait returns once every update handed on has settled, after at most d
// (on clk) or when ctx ends. While one is open, a long poll would come
// back at once with it (Telegram answers from the offset), so the poll
// loop waits here instead: at once confirmed when all settle, in the
// meantime polling every d for other chats' updates.
func (c *confirmations) wait(ctx context.Context, clk core.Clock, d time.Duration) {
	c.mu.Lock()
	if len(c.open) == 0 {
		c.mu.Unlock()
		return
	}
	settled := c.settled
	c.mu.Unlock()
	expired := make(chan struct{})
	t := clk.AfterFunc(d, func() { close(expired) })
	defer t.Stop()
	select {
	case <-settled:
	case <-expired:
	case <-ctx.Done():
	}
}

// openWhilePolling is how often the poll loop asks for new updates while
// one already handed on is not settled yet (a slow command, a record's
// write held up by NATS).
const openWhilePolling = time.Second

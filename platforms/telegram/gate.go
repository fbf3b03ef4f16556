package telegram

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/jake-bot/jake-bot/core"
)

// gate holds back writes to a chat that Telegram would refuse: every write
// while a 429's retry_after runs, and in groups the writes beyond the
// per-minute budget. It answers "wait d" rather than waiting itself, so the
// stream coordinator can keep coalescing; the router's per-reply retry
// alone would not stop another reply in the same chat from writing during
// the wait. It is safe for concurrent use.
type gate struct {
	clock core.Clock
	every time.Duration // one group write per every

	mu    sync.Mutex
	chats map[int64]*chatGate
}

type chatGate struct {
	until  time.Time
	budget *rate.Limiter
}

func newGate(clock core.Clock, perMinute int) *gate {
	return &gate{clock: clock, every: time.Minute / time.Duration(perMinute), chats: make(map[int64]*chatGate)}
}

// isGroup reports whether chat is a group: Telegram gives groups,
// supergroups and channels negative ids, private chats the user's id.
func isGroup(chat int64) bool { return chat < 0 }

func (g *gate) chat(id int64) *chatGate {
	c, ok := g.chats[id]
	if !ok {
		c = &chatGate{}
		if isGroup(id) {
			c.budget = rate.NewLimiter(rate.Every(g.every), 1)
		}
		g.chats[id] = c
	}
	return c
}

// reserve takes one write for chat and returns 0, or returns how long to
// wait before asking again. Writes that are not messages (typing) pass
// write=false and spend no budget.
func (g *gate) reserve(chat int64, write bool) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	c := g.chat(chat)
	if now.Before(c.until) {
		return c.until.Sub(now)
	}
	if !write || c.budget == nil {
		return 0
	}
	r := c.budget.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d
	}
	return 0
}

// block stops every write to chat for d, as a 429 asks.
func (g *gate) block(chat int64, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.chat(chat)
	if until := g.clock.Now().Add(d); until.After(c.until) {
		c.until = until
	}
}

// wait blocks until chat may be written to, or ctx ends.
func (g *gate) wait(ctx context.Context, chat int64) error {
	for {
		d := g.reserve(chat, true)
		if d == 0 {
			return nil
		}
		ch := make(chan struct{})
		t := g.clock.AfterFunc(d, func() { close(ch) })
		select {
		case <-ch:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

package telegram

import (
	"context"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/recent"
)

// gate holds back writes to a chat that Telegram would refuse: every write
// while a 429's retry_after runs, and in groups the writes beyond the
// per-minute budget. It answers "wait d" rather than waiting itself, so the
// stream coordinator can keep coalescing; the coordinator's own retry is
// per reply and would not stop another reply in the same chat from writing
// during the wait. Writes to one chat are also serialised, so that no write
// leaves while another's answer (perhaps a 429) is still on its way, and a
// group's next write leaves a budget's step after the last one's answer
// came, not after it left: Telegram counts a write as it arrives, and one
// slow on its way would otherwise arrive close to the next. It is safe for
// concurrent use.
type gate struct {
	clock core.Clock
	every time.Duration // one group write per every

	// chats holds the chats written to lately; a gate forgotten is made
	// anew, which only a bot writing to thousands of chats at once sees.
	chats *recent.Map[int64, *chatGate]
}

type chatGate struct {
	write sync.Mutex // held for the length of one write
	mu    sync.Mutex // guards until and next
	until time.Time
	// every is a group's step between writes (zero: a private chat, no
	// budget); next is when its next write may leave.
	every time.Duration
	next  time.Time
}

func newGate(clock core.Clock, perMinute int) *gate {
	return &gate{clock: clock, every: time.Minute / time.Duration(perMinute), chats: recent.New[int64, *chatGate](4096)}
}

// isGroup reports whether chat is a group: Telegram gives groups,
// supergroups and channels negative ids, private chats the user's id.
func isGroup(chat int64) bool { return chat < 0 }

func (g *gate) chat(id int64) *chatGate {
	if c, ok := g.chats.Get(id); ok {
		return c
	}
	c := &chatGate{}
	if isGroup(id) {
		c.every = g.every
	}
	if !g.chats.Add(id, c) {
		if made, ok := g.chats.Get(id); ok {
			return made // another write made it first
		}
	}
	return c
}

// acquire takes one write for chat. It returns a release func to call once
// the write's answer is in (and, for a 429, after block), or how long to
// wait before asking again.
func (g *gate) acquire(chat int64) (release func(), wait time.Duration) {
	c := g.chat(chat)
	c.write.Lock()
	if d := c.reserve(g.clock.Now(), true); d > 0 {
		c.write.Unlock()
		return nil, d
	}
	return func() {
		c.answered(g.clock.Now())
		c.write.Unlock()
	}, 0
}

// blocked returns how long chat is still under flood control.
func (g *gate) blocked(chat int64) time.Duration {
	return g.chat(chat).reserve(g.clock.Now(), false)
}

// reserve returns how long to wait: while flood control runs, and for a
// write, until the group's budget lets the next one leave.
func (c *chatGate) reserve(now time.Time, write bool) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Before(c.until) {
		return c.until.Sub(now)
	}
	if write && now.Before(c.next) {
		return c.next.Sub(now)
	}
	return 0
}

// answered starts the group's next step as a write's answer comes in.
func (c *chatGate) answered(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.every > 0 {
		c.next = now.Add(c.every)
	}
}

// block stops every write to chat for d, as a 429 asks.
func (g *gate) block(chat int64, d time.Duration) {
	c := g.chat(chat)
	c.mu.Lock()
	defer c.mu.Unlock()
	if until := g.clock.Now().Add(d); until.After(c.until) {
		c.until = until
	}
}

// wait blocks until chat may be written to, or ctx ends, and returns the
// release func of the write it acquired.
func (g *gate) wait(ctx context.Context, chat int64) (func(), error) {
	for {
		release, d := g.acquire(chat)
		if d == 0 {
			return release, nil
		}
		if !core.Sleep(ctx, g.clock, d) {
			return nil, ctx.Err()
		}
	}
}

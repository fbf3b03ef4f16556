package matrix

import (
	"context"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// gate holds the adapter's own writes (reactions, choices, mentions,
// files, typing) while the homeserver's rate limit is spent: its 429 is
// per account, so one answer holds every room. The coordinator waits out
// the replies' own 429s as core.RateLimitErrors.
type gate struct {
	clock core.Clock
	mu    sync.Mutex
	until time.Time
}

// hold closes the gate for d.
func (g *gate) hold(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := g.clock.Now().Add(d); t.After(g.until) {
		g.until = t
	}
}

// blocked returns how long a write would have to wait now.
func (g *gate) blocked() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(g.until.Sub(g.clock.Now()), 0)
}

// wait returns once the gate is open, or ctx's error once it ends.
func (g *gate) wait(ctx context.Context) error {
	for {
		d := g.blocked()
		if d == 0 {
			return nil
		}
		if !sleep(ctx, g.clock, d) {
			return ctx.Err()
		}
	}
}

// sleep waits d on clock; false when ctx ended first.
func sleep(ctx context.Context, clock core.Clock, d time.Duration) bool {
	done := make(chan struct{})
	t := clock.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

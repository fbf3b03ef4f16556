package replay

import (
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// replayStart is where a replay's clock starts: any fixed time, so that
// the output is the same on every run.
var replayStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// noWaitClock is a clock on which every wait is over at once: AfterFunc
// moves it forward by d and runs f. Rate limits still shape what the
// coordinator writes, in the clock's time, and nobody waits for real.
type noWaitClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *noWaitClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *noWaitClock) AfterFunc(d time.Duration, f func()) core.Timer {
	c.mu.Lock()
	c.now = c.now.Add(max(d, 0))
	c.mu.Unlock()
	go f()
	return firedTimer{}
}

// firedTimer is an AfterFunc call that has run already.
type firedTimer struct{}

func (firedTimer) Stop() bool { return false }

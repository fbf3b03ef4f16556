package core

import (
	"sync"
	"time"
)

// InstantClock is a Clock on which every wait is over at once: AfterFunc
// moves the clock forward by d and runs f. What paces itself on the clock
// (the coordinator's rate limits) still does so in the clock's time, and
// nobody waits for real: jakebot replay renders on one, the same on every
// run, and tests drive time with it (coretest). It adds up the waits of
// everyone who uses it. It is safe for concurrent use.
type InstantClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewInstantClock returns an InstantClock at now.
func NewInstantClock(now time.Time) *InstantClock { return &InstantClock{now: now} }

func (c *InstantClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *InstantClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	c.now = c.now.Add(max(d, 0))
	c.mu.Unlock()
	go f()
	return firedTimer{}
}

// firedTimer is an AfterFunc call that has run already.
type firedTimer struct{}

func (firedTimer) Stop() bool { return false }

package telegram

import (
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// fakeClock is a core.Clock that moves only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	added  chan struct{}
	// free makes every wait end at once (the clock jumps), so that a test
	// that has ended can still shut down.
	free bool
}

type fakeTimer struct {
	c    *fakeClock
	at   time.Time
	f    func()
	done bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), added: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) core.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	if c.free && d > 0 {
		c.now = t.at
	}
	if d <= 0 || c.free {
		t.done = true
		go f()
		return t
	}
	c.timers = append(c.timers, t)
	close(c.added)
	c.added = make(chan struct{})
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Added returns a channel closed when the next timer is set.
func (c *fakeClock) Added() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.added
}

// Next returns the time of the earliest pending timer.
func (c *fakeClock) Next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	ok := false
	for _, t := range c.timers {
		if !t.done && (!ok || t.at.Before(next)) {
			next, ok = t.at, true
		}
	}
	return next, ok
}

// AdvanceTo moves the clock to at (never back) and fires the timers due.
func (c *fakeClock) AdvanceTo(at time.Time) {
	c.mu.Lock()
	if at.After(c.now) {
		c.now = at
	}
	var keep []*fakeTimer
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.at.After(c.now):
			t.done = true
			go t.f()
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
}

// Advance moves the clock by d.
func (c *fakeClock) Advance(d time.Duration) { c.AdvanceTo(c.Now().Add(d)) }

// Free fires every pending timer and lets every later wait end at once.
func (c *fakeClock) Free() {
	c.mu.Lock()
	c.free = true
	var last time.Time
	for _, t := range c.timers {
		if !t.done && t.at.After(last) {
			last = t.at
		}
	}
	c.mu.Unlock()
	c.AdvanceTo(last)
}

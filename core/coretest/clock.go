// Package coretest provides fakes for testing code built on core: clocks
// that let a test drive time instead of sleeping.
package coretest

import (
	"sort"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// Epoch is where fake clocks start.
var Epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// InstantClock is a clock on which every wait is over at once
// (core.InstantClock): AfterFunc moves the clock forward by d and runs f.
// Rate limits still hold in the clock's time, which is what tests assert,
// and no test waits for real. It is a ManualClock freed from the start
// (see Free), and so adds up the waits of everyone who uses it: never
// share one between concurrent actors whose spacing a test asserts; drive
// a ManualClock instead. It is safe for concurrent use.
type InstantClock struct{ ManualClock }

// NewInstantClock returns an InstantClock at Epoch.
func NewInstantClock() *InstantClock {
	c := &InstantClock{}
	c.now, c.waiting, c.freed = Epoch, make(chan time.Duration, 1024), core.NewInstantClock(Epoch)
	return c
}

// ManualClock is a clock that moves only when the test calls Advance. It
// is safe for concurrent use.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []*manualTimer
	// waiting receives a value each time AfterFunc is called, so a test
	// can wait until the code under test is waiting on the clock.
	waiting chan time.Duration
	// freed, once Free has run, is the clock: every wait ends at once.
	freed *core.InstantClock
}

type manualTimer struct {
	c  *ManualClock
	at time.Time
	f  func()
	// stopped is set by Stop, or once the timer fired; c.mu guards it.
	stopped bool
}

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// NewManualClock returns a ManualClock at Epoch.
func NewManualClock() *ManualClock { return NewManualClockAt(Epoch) }

// NewManualClockAt returns a ManualClock at now: for a test whose real
// CLI compares times it reports with the real time.
func NewManualClockAt(now time.Time) *ManualClock {
	return &ManualClock{now: now, waiting: make(chan time.Duration, 1024)}
}

func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.freed != nil {
		return c.freed.Now()
	}
	return c.now
}

func (c *ManualClock) AfterFunc(d time.Duration, f func()) core.Timer {
	c.mu.Lock()
	if freed := c.freed; freed != nil {
		c.mu.Unlock()
		return freed.AfterFunc(d, f)
	}
	t := &manualTimer{c: c, at: c.now.Add(d), f: f}
	c.pending = append(c.pending, t)
	c.mu.Unlock()
	select {
	case c.waiting <- d:
	default:
	}
	return t
}

// Waiting returns a channel that receives the duration of every AfterFunc
// call.
func (c *ManualClock) Waiting() <-chan time.Duration { return c.waiting }

// Pending returns how many timers are waiting to fire.
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.pending {
		if !t.stopped {
			n++
		}
	}
	return n
}

// AdvanceToNext moves the clock to the earliest pending timer and runs
// every function then due. It reports whether there was a timer.
func (c *ManualClock) AdvanceToNext() bool {
	c.mu.Lock()
	next := c.earliest()
	c.mu.Unlock()
	if next == nil {
		return false
	}
	c.Advance(max(0, next.at.Sub(c.Now())))
	return true
}

// earliest is the pending timer due first, nil when there is none; c.mu
// is held.
func (c *ManualClock) earliest() *manualTimer {
	var next *manualTimer
	for _, t := range c.pending {
		if !t.stopped && (next == nil || t.at.Before(next.at)) {
			next = t
		}
	}
	return next
}

// Advance moves the clock forward by d and runs, in order, every function
// that became due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due, rest []*manualTimer
	for _, t := range c.pending {
		if !t.at.After(c.now) {
			due = append(due, t)
		} else {
			rest = append(rest, t)
		}
	}
	c.pending = rest
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		// A timer stopped meanwhile does not fire; one that fires
		// counts as stopped, as a real timer's Stop then returns false.
		c.mu.Lock()
		fire := !t.stopped
		t.stopped = true
		c.mu.Unlock()
		if fire {
			t.f()
		}
	}
}

// Free fires every pending timer, moving the clock to the last one, and
// makes every later wait end at once, as on an InstantClock: a test that
// has ended frees its clock so that the code under test can shut down.
// From then on the clock is a core.InstantClock, which Advance no longer
// moves.
func (c *ManualClock) Free() {
	c.mu.Lock()
	if c.freed != nil {
		c.mu.Unlock()
		return
	}
	last := c.now
	for _, t := range c.pending {
		if !t.stopped && t.at.After(last) {
			last = t.at
		}
	}
	// Freed before the timers fire, so that what they set ends at once.
	c.freed = core.NewInstantClock(last)
	d := last.Sub(c.now)
	c.mu.Unlock()
	c.Advance(d)
}

// Drive moves the clock to each timer as soon as one is set, until stop
// is called: time jumps to the earliest wait and never further, so the
// spacing of writes by concurrent actors is what they waited for (an
// InstantClock adds up the waits of all of them). stop waits for the
// driver to end; the clock is then as manual as before.
func (c *ManualClock) Drive() (stop func()) { return c.DriveWithin(-1) }

// DriveWithin is Drive for the timers at most limit ahead of the clock
// (a negative limit: all of them). A longer wait, such as a schedule
// hours away, stays pending until the test Advances to it, while the
// short ones (edit intervals, rate limits) pass as they are set.
func (c *ManualClock) DriveWithin(limit time.Duration) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-c.waiting:
				c.AdvanceWithin(limit)
			case <-done:
				return
			}
		}
	}()
	return sync.OnceFunc(func() {
		close(done)
		<-ended
	})
}

// AdvanceWithin is AdvanceToNext when the earliest pending timer is at
// most limit ahead, or limit is negative: a test that drives the clock
// itself leaves the longer waits (a schedule's) pending. It reports
// whether it moved the clock.
func (c *ManualClock) AdvanceWithin(limit time.Duration) bool {
	if limit >= 0 {
		c.mu.Lock()
		next := c.earliest()
		far := next != nil && next.at.Sub(c.now) > limit
		c.mu.Unlock()
		if far {
			return false
		}
	}
	return c.AdvanceToNext()
}

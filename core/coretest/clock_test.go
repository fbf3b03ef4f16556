package coretest_test

import (
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core/coretest"
)

// Two actors waiting a second each at the same time: on a driven clock
// both wake a second later, as on a real one; an instant clock adds the
// waits up. Both wait before the driver starts: set one after the other
// under a running driver, the second may be set once the first has
// fired, a second later (it happened once, under make test's load).
func TestDriveJumpsToTheEarliestWaitOnly(t *testing.T) {
	t.Parallel()
	manual := coretest.NewManualClock()
	instant := coretest.NewInstantClock()
	woke := make(chan time.Time, 4)
	for range 2 {
		manual.AfterFunc(time.Second, func() { woke <- manual.Now() })
	}
	stop := manual.Drive()
	defer stop()
	for range 2 {
		if at := <-woke; at != coretest.Epoch.Add(time.Second) {
			t.Errorf("a driven clock woke an actor at %v, want a second after the start", at.Sub(coretest.Epoch))
		}
	}
	for range 2 {
		instant.AfterFunc(time.Second, func() {})
	}
	if got := instant.Now().Sub(coretest.Epoch); got != 2*time.Second {
		t.Errorf("an instant clock moved %v, want the two waits added up", got)
	}
}

// Free fires what waits and ends every later wait at once.
func TestFreeEndsEveryWait(t *testing.T) {
	t.Parallel()
	c := coretest.NewManualClock()
	fired := make(chan struct{}, 2)
	c.AfterFunc(time.Hour, func() { fired <- struct{}{} })
	c.Free()
	<-fired
	c.AfterFunc(time.Minute, func() { fired <- struct{}{} })
	<-fired
	if got := c.Now().Sub(coretest.Epoch); got != time.Hour+time.Minute {
		t.Errorf("clock moved %v, want an hour and a minute", got)
	}
}

// DriveWithin passes the short waits as they are set and leaves a long
// one for the test to Advance to.
func TestDriveWithinLeavesLongWaits(t *testing.T) {
	t.Parallel()
	c := coretest.NewManualClock()
	stop := c.DriveWithin(time.Minute)
	defer stop()
	woke := make(chan string, 2)
	c.AfterFunc(time.Hour, func() { woke <- "hour" })
	c.AfterFunc(time.Second, func() { woke <- "second" })
	if got := <-woke; got != "second" {
		t.Fatalf("%s passed first, want the second", got)
	}
	stop() // whatever the driver had still to see, it never passes the hour
	if n := c.Pending(); n != 1 {
		t.Fatalf("%d timers pending, want the hour's", n)
	}
	c.Advance(time.Hour)
	if got := <-woke; got != "hour" || c.Now() != coretest.Epoch.Add(time.Hour+time.Second) {
		t.Errorf("%s passed at %v, want the hour an hour and a second on", got, c.Now().Sub(coretest.Epoch))
	}
}

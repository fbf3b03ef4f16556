package core_test

import (
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// On an InstantClock every wait is over at once, and the clock has moved
// by the waits of everyone who waited.
func TestInstantClockAddsUpTheWaits(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := core.NewInstantClock(start)
	fired := make(chan struct{}, 3)
	for _, d := range []time.Duration{time.Second, 2 * time.Second, -time.Hour} {
		if c.AfterFunc(d, func() { fired <- struct{}{} }).Stop() {
			t.Errorf("Stop of a %v wait = true, want false: it has fired", d)
		}
	}
	for range 3 {
		<-fired
	}
	if got := c.Now().Sub(start); got != 3*time.Second {
		t.Errorf("the clock moved %v, want 3s (a negative wait is none)", got)
	}
}

package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// A user's turns that nobody started by writing (schedules, the agent's
// schedules, continuations) are capped per UTC day
// (UNATTENDED_TURNS_PER_DAY; issue 41, Medium 6): once the day's are
// spent, a schedule's firing is skipped, the chat told once, and the next
// day they run again. Before, a schedule ran every minute for ever.
func TestUnattendedTurnsAreCappedPerDay(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock() // 2026-01-02 03:04 UTC
	f := newRouterFixtureWith(t, echo, clock, func(cfg *core.RouterConfig) { cfg.UnattendedTurnsPerDay = 2 })
	f.say("bob", "/fake start")
	f.expect("conversation started")
	f.say("bob", "/every 1m ping")
	f.expect("Scheduled #1 (every 1m0s)")
	fire := func() {
		f.router.Wait()
		clock.Advance(time.Minute)
	}
	for range 2 {
		fire()
		f.expect("⏰ Schedule #1 (every 1m0s) sends: ping")
		f.expect("echo: ping")
	}
	fire()
	f.expect("⏰ Schedule #1 (every 1m0s) was not run: bob had 2 turns today that nobody started by writing")
	fire() // skipped without a word
	f.router.Wait()
	clock.Advance(21 * time.Hour) // 2026-01-03 00:07 UTC
	if got := f.next(); !strings.Contains(got, "⏰ Schedule #1 (every 1m0s) sends: ping") {
		t.Fatalf("the next day: bot wrote %q, want the schedule to run again", got)
	}
	f.expect("echo: ping")
	f.say("bob", "hello") // a person's own turn is never capped
	f.expect("echo: hello")
}

package remote_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// A runner that has stopped, and is not yet counted offline, is named
// with when it was last heard, and the user is told their message did not
// reach it: not "it is not connected".
func TestStoppedRunnerIsNamed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	clock := coretest.NewManualClock()
	w.clock, w.offlineAfter = clock, remote.OfflineAfter
	w.startGateway()
	box2 := w.startRunner(runnerOpts{name: "box2", interval: time.Hour})
	w.waitOnline("box2")
	w.startOn(box2)
	box2.stop()
	clock.Advance(10 * time.Second) // heard at 03:04:05, not yet offline
	w.say("are you there?")
	want := "runner box2 is offline (last seen 03:04:05 UTC): your message was not sent to it. Send it again once /runners shows it online."
	if got := w.expect("Error"); !strings.Contains(got, want) {
		t.Errorf("the user is told %q, want %q", got, want)
	}
	if n := len(box2.plugin.Turns()); n != 0 {
		t.Errorf("box2 ran %d turns", n)
	}
}

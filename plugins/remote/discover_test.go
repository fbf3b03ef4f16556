package remote_test

import "testing"

// A gateway just restarted waits a moment for a conversation's runner to
// answer its call to announce themselves: the first message after a
// restart is not refused for coming before the runner's answer.
func TestFirstMessageAfterARestartWaitsForItsRunner(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	w.startOn(box2)
	w.say("one")
	w.expect("box2 echo: one")
	box2.stop()
	w.gw.stop(false)
	w.startGateway()
	w.say("two")
	again := w.startRunner(runnerOpts{name: "box2", roots: box2.roots})
	w.expect("box2 echo: two")
	if turn := recv(t, again.plugin.Started(), "the turn on box2"); turn.Prompt != "two" {
		t.Errorf("box2 ran %q", turn.Prompt)
	}
}

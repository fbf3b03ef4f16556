package remote_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// A gateway that stops mid-turn, killed or restarted, loses nothing of
// the turn: the runner goes on with it, its messages wait in the stream,
// and the next gateway goes on with the reply from the first event the
// chat has not seen (a killed gateway's last second may be shown again).
// Every event arrives, in order, and the reply ends complete, with the
// turn's result kept.
func TestGatewayRestartedMidTurn(t *testing.T) {
	t.Parallel()
	for _, crash := range []bool{true, false} {
		t.Run(map[bool]string{true: "killed", false: "restarted"}[crash], func(t *testing.T) {
			t.Parallel()
			w, box2 := newWorldWithBox2(t)
			w.startOn(box2)
			w.say("slow")
			w.expect("part 2.")
			old := w.gw
			shown := strings.Join(old.rec.Messages(), "\n")
			old.stop(crash)
			if !crash {
				// A restart delivers its reply's last state, which says
				// where the turn went.
				shown = strings.Join(old.rec.Messages(), "\n")
				if !strings.Contains(shown, "this turn goes on on box2") {
					t.Errorf("the restart did not say the turn goes on:\n%s", shown)
				}
			}
			close(box2.release) // the turn goes on, with no gateway up

			w.startGateway()
			w.expect("$0.0100") // the reply's footer: the end applied
			rest := strings.Join(w.gw.rec.Messages(), "\n")
			for _, part := range []string{"part 1.", "part 2."} {
				// A gateway that stops saves where it was; one killed may
				// not have saved its last second (recordSaver), which the
				// next shows again rather than lose.
				again := 0
				if crash {
					again = strings.Count(rest, part)
				}
				if strings.Count(shown, part) != 1 || strings.Count(rest, part) != again || again > 1 {
					t.Errorf("%q was shown %d times before and %d times after", part, strings.Count(shown, part), strings.Count(rest, part))
				}
			}
			if strings.Contains(rest, "part 1.") && !strings.Contains(rest, "part 2.") {
				t.Errorf("the reply went on with a hole in what it showed again:\n%s", rest)
			}
			for _, part := range []string{"part 3.", "part 4."} {
				if strings.Contains(shown, part) || strings.Count(rest, part) != 1 {
					t.Errorf("%q was shown %d times before and %d times after", part, strings.Count(shown, part), strings.Count(rest, part))
				}
			}
			if !(strings.Index(rest, "continued") < strings.Index(rest, "part 3.") && strings.Index(rest, "part 3.") < strings.Index(rest, "part 4.")) {
				t.Errorf("the reply went on out of order:\n%s", rest)
			}
			if conv, _ := w.convs.Get(key(admin)); conv.SessionID != session || conv.Spent.CostUSD != 0.01 {
				t.Errorf("the conversation kept %+v, want the turn's session and cost", conv)
			}
			recv(t, box2.plugin.Started(), "a turn on box2")
			select {
			case turn := <-box2.plugin.Started():
				t.Errorf("the runner ran the turn again: %+v", turn)
			default:
			}
			// Its end applied, the turn is no longer left for a gateway.
			g, err := remote.NewGateway(context.Background(), connect(t, w.url), remote.GatewayConfig{})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if left := g.Unfinished("fake"); len(left) != 0 {
				t.Errorf("%d turns left unfinished", len(left))
			}
		})
	}
}

// A runner not heard for OfflineAfter (15 s) is offline, not a moment
// later: its running turn's chat is told and the turn is stopped there,
// so that once the runner is heard again (a partition healed) the next
// turn continues the session alone.
func TestSilentRunnerIsOffline(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	clock := coretest.NewManualClock()
	w.clock, w.offlineAfter = clock, remote.OfflineAfter
	w.startGateway() // first: the runner announces itself once, when it starts
	box2 := w.startRunner(runnerOpts{name: "box2", interval: time.Hour})
	w.waitOnline("box2")
	w.startOn(box2)
	w.say("wait")
	w.expect("waiting on " + box2.app())
	recv(t, box2.plugin.Started(), "a turn on box2")

	clock.Advance(remote.OfflineAfter - time.Millisecond)
	w.say("/runners")
	w.expect("box2 (online)")
	clock.Advance(time.Millisecond)
	w.expect("runner box2 went offline during the turn (nothing heard from it for 15s)")
	if cause := recv(t, box2.stopped, "the turn to stop"); cause != core.ErrStopped {
		t.Errorf("the turn the gateway gave up on ended by %v, want stopped", cause)
	}
	w.say("are you back?")
	w.expect("runner box2 is offline (last heard 15s ago)")

	if err := connect(t, w.url).Publish("jakebot.v4.discover", nil); err != nil {
		t.Fatal(err)
	}
	w.waitOnline("box2")
	w.say("now?")
	w.expect("box2 echo: now?")
	if turn := recv(t, box2.plugin.Started(), "a turn on box2"); turn.SessionID != session {
		t.Errorf("the next turn resumed %q, want the session %s", turn.SessionID, session)
	}
}

// A question open when the gateway died is asked again by the next one,
// once, and its answer reaches the turn on the runner.
func TestGatewayRestartedDuringAQuestion(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	w.startOn(box2)
	w.say("ask")
	w.expect("rm -rf build")
	w.gw.stop(true)
	w.startGateway()
	w.expect("rm -rf build")
	w.say("/allow")
	w.expect("the answer was allow", "$0.0100")
	if shown := strings.Join(w.gw.rec.Messages(), "\n"); strings.Count(shown, "rm -rf build") != 1 {
		t.Errorf("the question was asked %d times:\n%s", strings.Count(shown, "rm -rf build"), shown)
	}
}

package remote_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// startHold holds the start of a turn on a runner: the runner's check of
// the turn's session id waits, the gateway waiting for the runner's
// answer meanwhile, until the test answers on answer (nil: the runner
// takes the turn; an error: it refuses it).
type startHold struct {
	checking chan struct{}
	answer   chan error
}

// holding is a runner's "claude" whose turns' starts the test may hold.
type holding struct {
	*plugintest.Scripted
	holds chan *startHold
}

func (h holding) CheckSessionID(string) error {
	select {
	case hold := <-h.holds:
		close(hold.checking)
		return <-hold.answer
	default:
		return nil
	}
}

// holdStart holds the start of r's next turn that resumes a session,
// until the test answers or ends (then the runner refuses the turn).
func (r *runner) holdStart(t *testing.T) *startHold {
	h := &startHold{checking: make(chan struct{}), answer: make(chan error, 1)}
	r.holds <- h
	t.Cleanup(func() {
		select {
		case h.answer <- errors.New("the test ended"):
		default: // answered
		}
	})
	return h
}

// A gateway that stops (restarted, or killed) while it waits for the
// runner's answer to a turn's start leaves the turn to the next one,
// which asks the runner whether it took it: a turn it took is followed
// to its end, running or ended meanwhile, its reply shown once; one it
// refused, or had not taken yet when asked (it is told to drop it), is
// told lost in its chat, offered to run again. The gateway once stopped
// such a turn when restarted, and, killed, left a record whose follower
// waited for a turn that never started.
func TestGatewayStoppedWaitingForATurnsStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// then is what the runner does with the held start before the
		// next gateway starts: "take" the turn, which goes on; take it
		// and let it "end"; "refuse" it; or nothing yet ("hold"), then
		// take it once the next gateway has asked.
		then string
	}{
		{"taken, running", "take"},
		{"taken, ended", "end"},
		{"refused", "refuse"},
		{"still held", "hold"},
	} {
		for _, crash := range []bool{true, false} {
			t.Run(tc.name+"/"+map[bool]string{true: "killed", false: "restarted"}[crash], func(t *testing.T) {
				t.Parallel()
				w := newWorld(t)
				box2 := w.startRunner(runnerOpts{name: "box2", holdStarts: true})
				w.startGateway()
				w.waitOnline("box2")
				w.startOn(box2)
				w.say("hi") // a session, whose next turn's start is checked
				w.expect("box2 echo: hi", "$0.0100")
				recv(t, box2.plugin.Started(), "the first turn")

				prompt := "hello"
				if tc.then == "take" {
					prompt = "slow"
				}
				var ended chan struct{}
				if tc.then == "end" {
					ended = endOnStream(t, w, "box2")
				}
				hold := box2.holdStart(t)
				w.say(prompt)
				recv(t, hold.checking, "the runner to check the turn")
				old := w.gw
				old.stop(crash)
				if shown := strings.Join(old.rec.Messages(), "\n"); !crash && !strings.Contains(shown, "this turn goes on on box2") {
					t.Errorf("the restart did not say the turn goes on:\n%s", shown)
				}
				switch tc.then {
				case "take", "end":
					hold.answer <- nil
					recv(t, box2.plugin.Started(), "the held turn")
					if ended != nil {
						recv(t, ended, "the turn's end in the stream")
					}
				case "refuse":
					hold.answer <- core.Errorf("not today")
				}

				w.startGateway()
				switch tc.then {
				case "take":
					w.expect("part 2.")
					close(box2.release)
					w.expect("$0.0100")
					rest := strings.Join(w.gw.rec.Messages(), "\n")
					for _, part := range []string{"part 1.", "part 2.", "part 3.", "part 4."} {
						if n := strings.Count(rest, part); n != 1 {
							t.Errorf("%q was shown %d times:\n%s", part, n, rest)
						}
					}
				case "end":
					w.expect("box2 echo: hello", "$0.0100")
					if rest := strings.Join(w.gw.rec.Messages(), "\n"); strings.Count(rest, "box2 echo: hello") != 1 {
						t.Errorf("the reply was not shown once:\n%s", rest)
					}
				default:
					w.expect("A turn was lost", "runner box2", "The message was: hello", "Send it again to run it again.")
					if tc.then == "hold" {
						hold.answer <- nil // too late: the runner was told to drop it
					}
					w.say("hello")
					w.expect("box2 echo: hello")
					var hellos int
					for _, turn := range box2.plugin.Turns() {
						if turn.Prompt == "hello" {
							hellos++
						}
					}
					if hellos != 1 {
						t.Errorf("the runner ran %d turns saying hello, want the one sent again", hellos)
					}
				}
				if shown := strings.Join(w.gw.rec.Messages(), "\n"); tc.then != "refuse" && tc.then != "hold" && strings.Contains(shown, "lost") {
					t.Errorf("a turn the runner took was told lost:\n%s", shown)
				}
			})
		}
	}
}

// endOnStream is closed once runner's messages carry the end of a turn:
// the runner sends it to the stream, and waits for the stream to take it
// before the turn leaves its subjects.
func endOnStream(t *testing.T, w *world, runner string) chan struct{} {
	ended := make(chan struct{})
	nc := connect(t, w.url)
	var once bool
	if _, err := nc.Subscribe("jakebot.v4.runner."+runner+".events", func(m *nats.Msg) {
		if !once && strings.Contains(string(m.Data), `"done":true`) {
			once = true
			close(ended)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ended
}

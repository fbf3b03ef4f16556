package remote_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jake-bot/jake-bot/core"
)

// A conversation on another machine: started there within the runner's
// roots, its turns run there with the events back in order, questions
// answered from the chat, its history listed there; paths outside the
// runner's roots and unknown runners refused.
func TestConversationOnARunner(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	app := box2.app()

	w.say("/claude start box2:" + app)
	w.expect("conversation started in box2:" + app)
	w.say("hello")
	w.expect("box2 echo: hello")
	if turn := recv(t, box2.plugin.Started(), "a turn on box2"); turn.Workdir != app || turn.Prompt != "hello" {
		t.Errorf("the runner ran %+v", turn)
	}

	w.say("ask")
	w.expect("rm -rf build")
	w.say("/allow")
	w.expect("the answer was allow", "$0.0100") // the turn's end: the conversation may move
	recv(t, box2.plugin.Started(), "a turn on box2")

	w.say("/claude conversations")
	w.expect("earlier in app")

	w.say("/status")
	w.expect("box2:" + app)

	w.say("/claude start box2:/etc")
	w.expect("outside")
	w.say("/claude start box9:/srv")
	w.expect(`no runner "box9" has connected`)
	w.say("/file notes.txt") // read there (TestDiffAndFileOnARunner)
	w.expect("notes.txt: no such file or directory")
}

// A usage window a runner's CLI reports comes back with the turn, warned
// of in the reply and listed by /limits as that runner's.
func TestLimitsOnARunner(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	w.say("/claude start box2:" + box2.app())
	w.expect("conversation started")
	w.say("limited")
	w.expect("near the limit", "Claude Code 5h window 95 % on box2 · resets")
	w.say("/limits")
	w.expect("Claude Code 5h window 95 % on box2 · resets Wed 2 Jan 18:40 UTC")
}

// Two runners serve turns at once: a turn waiting on box2 does not hold
// up box3's, and each runs where its conversation is.
func TestTwoRunners(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	box2 := w.startRunner(runnerOpts{name: "box2"})
	box3 := w.startRunner(runnerOpts{name: "box3"})
	w.startGateway()
	w.waitOnline("box2")
	w.waitOnline("box3")
	on2, on3 := key(admin), core.ConversationKey{Platform: "fake", User: admin, Channel: "c3"}

	w.sayAs(on2, "", "/claude start box2:"+box2.app())
	w.expect("started in box2:" + box2.app())
	w.sayAs(on3, "", "/claude start box3:"+box3.app())
	w.expect("started in box3:" + box3.app())
	w.sayAs(on2, "", "wait")
	w.expect("waiting on " + box2.app())
	w.sayAs(on3, "", "hello three")
	w.expect("box3 echo: hello three")
	if turn := recv(t, box3.plugin.Started(), "a turn on box3"); turn.Workdir != box3.app() {
		t.Errorf("box3 ran a turn in %s", turn.Workdir)
	}
	w.sayAs(on2, "", "/stop")
	w.expect("Stopped")
	if turn := recv(t, box2.plugin.Started(), "a turn on box2"); turn.Workdir != box2.app() || turn.Prompt != "wait" {
		t.Errorf("box2 ran %+v", turn)
	}
	if cause := recv(t, box2.stopped, "the turn to stop"); cause != core.ErrStopped {
		t.Errorf("box2's turn ended by %v, want /stop", cause)
	}
}

// /resume lists the runner's history and continues a session of it
// there.
func TestResumeOnARunner(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	w.startOn(box2)
	w.say("/resume")
	w.expect("earlier in app")
	w.say("/resume 1")
	w.expect("Resumed Claude Code conversation " + session)
	w.say("/status")
	w.expect("Session: " + session)
	w.say("go on")
	w.expect("box2 echo: go on")
	if turn := recv(t, box2.plugin.Started(), "a turn on box2"); turn.SessionID != session || turn.Workdir != box2.app() {
		t.Errorf("the resumed turn ran %+v", turn)
	}
}

// A runner that restarts mid-turn (a crash, and back at once): the turn
// ends saying so without waiting for the runner to fall silent, and the
// conversation goes on in its session on the new runner process.
func TestRunnerRestartedMidTurn(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	w.startOn(box2)
	w.say("wait")
	w.expect("waiting on " + box2.app())
	recv(t, box2.plugin.Started(), "a turn on box2")
	box2.kill()
	again := w.startRunner(runnerOpts{name: "box2", roots: box2.roots})
	w.expect("runner box2 restarted during the turn")
	w.say("now?")
	w.expect("box2 echo: now?")
	if turn := recv(t, again.plugin.Started(), "a turn on box2"); turn.SessionID != session {
		t.Errorf("the next turn resumed %q, want the session %s", turn.SessionID, session)
	}
	if strings.Contains(strings.Join(w.gw.rec.Messages(), "\n"), "offline") {
		t.Error("the runner was called offline; it restarted")
	}
}

// A gateway leaves no consumer behind a turn: NATS keeps an idle one for
// five minutes, and a server may bound a stream's consumers, so a busy
// gateway would otherwise be refused turns. Here the server allows two.
func TestTurnsLeaveNoConsumers(t *testing.T) {
	t.Parallel()
	opts := &server.Options{}
	opts.JetStreamLimits.DefaultMaxConsumers = 2
	w := &world{t: t, url: runNATS(t, opts), convs: core.NewState()}
	box2 := w.startRunner(runnerOpts{name: "box2"})
	w.startGateway()
	w.waitOnline("box2")
	w.startOn(box2)
	for _, text := range []string{"one", "two", "three", "four"} {
		w.say(text)
		w.expect("box2 echo: "+text, "$0.0100")
	}
}

// /mode in a conversation on a runner offers the modes of the runner's
// plugin, as it announced them, and a bypass mode to admins only.
func TestModesOnARunner(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	app := box2.app()
	mine := key(user)
	w.sayAs(mine, "", "/claude start box2:"+app)
	w.expect("conversation started in box2:" + app)
	w.sayAs(mine, "", "/mode")
	w.expect("careful — ", "yolo — ", "(admins only)")
	w.sayAs(mine, "", "/mode yolo")
	w.expect("mode yolo runs tools with nobody approving them: only admins may choose it")
	w.sayAs(mine, "", "/mode careful")
	w.expect("careful")
	w.sayAs(mine, "", "hello")
	w.expect("box2 echo: hello")
	if turn := recv(t, box2.plugin.Started(), "a turn on box2"); turn.Mode != "careful" {
		t.Errorf("the turn ran in mode %q, want careful", turn.Mode)
	}
}

// A question too large for a NATS message even cut short (its options) is
// denied on the runner, the chat told why, rather than left waiting for
// an answer nobody was asked.
func TestQuestionTooLargeToAsk(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	w.startOn(box2)
	w.say("ask too much")
	w.expect("the answer was deny: the question was too large to send to the chat", "too large to send from runner box2")
}

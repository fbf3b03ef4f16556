package remote_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
	"github.com/jake-bot/jake-bot/plugins/remote/remotetest"
)

// An answer and a /stop given while the runner is out of reach (its
// connection cut, not long enough to count as offline) reach it once it
// is back: they are sent again until the runner acknowledges them.
func TestAnswerAndStopCrossAPartition(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.offlineAfter = time.Hour
	l := remotetest.NewLink(t, w.url)
	box2 := w.startRunner(runnerOpts{name: "box2", nats: remote.Config{URL: l.URL()}})
	w.startGateway()
	w.waitOnline("box2")
	app := box2.app()
	w.say("/claude start box2:" + app)
	w.expect("conversation started in box2:" + app)
	// What the gateway sends box2 reaches the server: seen here.
	seen := connect(t, w.url)
	sent, err := seen.SubscribeSync("jakebot.v4.runner.box2.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := seen.Flush(); err != nil {
		t.Fatal(err)
	}
	// sentWhileCut waits until the gateway has sent box2 a message on
	// subject what.
	sentWhileCut := func(what string) {
		t.Helper()
		for {
			m, err := sent.NextMsg(30 * time.Second)
			if err != nil {
				t.Fatalf("the gateway sent no %s: %v", what, err)
			}
			if strings.HasSuffix(m.Subject, "."+what) {
				return
			}
		}
	}

	w.say("ask")
	w.expect("rm -rf build")
	l.Cut()
	w.say("/allow")
	sentWhileCut("answer")
	l.Heal()
	w.expect("the answer was allow")
	recv(t, box2.plugin.Started(), "the turn that asked")

	w.say("wait")
	w.expect("waiting on " + app)
	recv(t, box2.plugin.Started(), "the turn that waits")
	l.Cut()
	w.say("/stop")
	sentWhileCut("cancel")
	l.Heal()
	if err := recv(t, box2.stopped, "the turn's stop on box2"); !errors.Is(err, core.ErrStopped) {
		t.Errorf("the turn on box2 ended with %v, want it stopped", err)
	}
}

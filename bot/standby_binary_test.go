package bot_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// awaitLog waits until b's log matches re.
func (b *binBot) awaitLog(re *regexp.Regexp) {
	b.t.Helper()
	deadline := time.Now().Add(patience)
	for !re.MatchString(b.stderr.String()) {
		if time.Now().After(deadline) {
			b.t.Fatalf("no log line matches %s:\n%s", re, b.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// standbyEnv is the binary's environment as gateway name on the NATS
// server at url and the Telegram fake srv, with extra settings.
func standbyEnv(f *fixture, url string, srv *telegramtest.Server, name string, extra ...string) []string {
	return f.binEnv(append([]string{"NATS_URL=" + url, "GATEWAY_NAME=" + name, "FAILOVER_AFTER=2s", "APPROVALS=auto", "WARM_TTL=0",
		"TELEGRAM_TOKEN=" + telegramtest.Token, "TELEGRAM_API_ENDPOINT=" + srv.Endpoint(),
		"TELEGRAM_ALLOWED_USERS=" + strconv.FormatInt(telegramUsers[owner].ID, 10),
		"TELEGRAM_POLL_TIMEOUT=1s", "TELEGRAM_EDIT_INTERVAL=10ms", "TELEGRAM_GROUP_WRITES_PER_MINUTE=100000"}, extra...)...)
}

// Two jakebot processes on one NATS server and the Telegram fake: the
// active one is SIGKILLed, so nothing of it hands over; its lease expires
// and the standby takes over, answering the conversation, which it finds
// in NATS. Never two pollers.
func TestStandbyTakesOverFromAKilledGateway(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Hello from gw-a."}}, plugintest.Reply{Text: []string{"Hello from gw-b."}})
	url := startNATS(t)
	srv := telegramtest.New(t)
	a := startBinary(t, f.workdir, standbyEnv(f, url, srv, "gw-a"))
	a.awaitLog(regexp.MustCompile(`lease taken: this gateway is active" gateway=gw-a`))
	b := startBinary(t, f.workdir, standbyEnv(f, url, srv, "gw-b"))
	b.awaitLog(regexp.MustCompile(`standing by: another gateway is active" gateway=gw-b active=gw-a`))

	c := &chat{t: t, d: &telegramDriver{t: t, srv: srv, topic: srv.NewTopic(telegramTeam, "work")}}
	c.say("/claude start " + f.workdir)
	c.expect(`conversation started`)
	c.say("hello")
	c.expect(`Hello from gw-a\.`, `— \d+\.\ds`) // its footer: the turn is over
	awaitState(t, url, f.workdir)

	a.signal(syscall.SIGKILL)
	<-a.exited
	b.awaitLog(regexp.MustCompile(`lease taken: this gateway is active" gateway=gw-b`))
	c.say("and now?")
	c.expect(`Hello from gw-b\.`, `— \d+\.\ds`)
	if n := len(srv.Conflicts()); n != 0 {
		t.Errorf("two gateways polled Telegram at once: %d conflicts", n)
	}
	if strings.Contains(b.stderr.String(), "turn lost with the gateway") {
		t.Error("gw-b reported a lost turn: gw-a ran none when it was killed")
	}
}

// A message on a runner's conversation that waited in the active gateway
// for a turn slot when the gateway was SIGKILLed never reached its runner:
// the standby that takes over tells its chat it was lost and offers to
// run it again, while the turn that held the slot, which goes on on the
// runner, is followed and not reported.
func TestStandbyReportsAMessageKilledWhileWaitingForASlot(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f := newFixture(t, plugintest.Reply{Text: []string{"Held on box2."}, Hold: release}, plugintest.Reply{Text: []string{"Ran again on box2."}})
	url := startNATS(t)
	startRunnerBot(t, url, f.config())
	srv := telegramtest.New(t)
	a := startBinary(t, f.workdir, standbyEnv(f, url, srv, "gw-a", "MAX_RUNNING_TURNS=1"))
	a.awaitLog(regexp.MustCompile(`lease taken: this gateway is active" gateway=gw-a`))
	b := startBinary(t, f.workdir, standbyEnv(f, url, srv, "gw-b"))
	b.awaitLog(regexp.MustCompile(`standing by: another gateway is active" gateway=gw-b active=gw-a`))

	onBox2 := func() *chat {
		d := &telegramDriver{t: t, srv: srv}
		c := &chat{t: t, d: d}
		startOnBox2(c, d, f.workdir)
		return c
	}
	holding, waiting := onBox2(), onBox2()
	holding.say("hold the slot")
	<-f.model.Arrived()
	waiting.say("wait in line")
	waiting.expect(`number 1 in line`)
	// gw-a saves its state a moment after a change (the bot's debounce):
	// killed before, it would take both conversations with it, which is
	// not what this test is about.
	if !awaitSavedState(t, url, func(v []byte) bool {
		var s struct {
			Conversations []json.RawMessage `json:"conversations"`
		}
		return json.Unmarshal(v, &s) == nil && len(s.Conversations) == 2
	}) {
		t.Fatal("gw-a never saved both conversations in NATS")
	}

	a.signal(syscall.SIGKILL)
	<-a.exited
	b.awaitLog(regexp.MustCompile(`lease taken: this gateway is active" gateway=gw-b`))
	waiting.expect(`⚠️ A turn was lost: gateway gw-a`, `wait in line`)
	waiting.press(owner, "Run again")
	waiting.expect(`Ran again on box2\.`)
	close(release)
	holding.expect(`Held on box2\.`)
	if got := holding.dump(); strings.Contains(got, "A turn was lost") {
		t.Errorf("the turn gw-b followed on box2 was reported lost too:\n%s", got)
	}
	if n := len(srv.Conflicts()); n != 0 {
		t.Errorf("two gateways polled Telegram at once: %d conflicts", n)
	}
}

// standbyOnBox2 starts a runner box2, gateways gw-a (active) and gw-b
// (standing by) on the Telegram fake, and a conversation on box2, on a
// model that answers replies.
func standbyOnBox2(t *testing.T, replies ...plugintest.Reply) (f *fixture, srv *telegramtest.Server, a, b *binBot, c *chat) {
	t.Helper()
	f = newFixture(t, replies...)
	url := startNATS(t)
	startRunnerBot(t, url, f.config())
	srv = telegramtest.New(t)
	a = startBinary(t, f.workdir, standbyEnv(f, url, srv, "gw-a"))
	a.awaitLog(regexp.MustCompile(`lease taken: this gateway is active" gateway=gw-a`))
	b = startBinary(t, f.workdir, standbyEnv(f, url, srv, "gw-b"))
	b.awaitLog(regexp.MustCompile(`standing by: another gateway is active" gateway=gw-b active=gw-a`))
	d := &telegramDriver{t: t, srv: srv}
	c = &chat{t: t, d: d}
	startOnBox2(c, d, f.workdir)
	awaitState(t, url, "box2") // saved, for a standby to find after a kill
	return f, srv, a, b, c
}

// A turn on a runner that had ended there, its end applied by the active
// gateway (so that no gateway follows it again), but whose reply was not
// delivered yet when the gateway was SIGKILLed, is reported by the
// standby: it stays recorded until its reply is delivered.
func TestStandbyReportsARunnerTurnEndedButNotDelivered(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f, srv, a, b, c := standbyOnBox2(t, plugintest.Reply{Text: []string{"Finished on box2."}, Hold: release})

	c.say("finish here")
	<-f.model.Arrived()
	srv.StallNext("sendMessage", time.Minute) // the reply's
	close(release)
	srv.WaitFor(t, "the reply's send stalled", func() bool {
		for _, call := range srv.Calls("sendMessage") {
			if call.Error == "stalled" {
				return true
			}
		}
		return false
	})
	a.awaitLog(regexp.MustCompile(`msg=turn id=\S+ conversation=\S+ plugin=claude outcome=ok`))

	a.signal(syscall.SIGKILL)
	<-a.exited
	b.awaitLog(regexp.MustCompile(`lease taken: this gateway is active" gateway=gw-b`))
	c.expect(`⚠️ A turn was lost: gateway gw-a`, `finish here`)
}

// A message the active gateway took (recorded, its turn started on a
// runner) whose confirmation never reached Telegram, because the gateway
// was SIGKILLed first, comes again to the standby that takes over: it
// drops it rather than answer it twice, and follows the turn to its one
// reply.
func TestStandbyDropsAMessageTheKilledGatewayTookButDidNotConfirm(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f, srv, a, b, c := standbyOnBox2(t, plugintest.Reply{Text: []string{"Held on box2."}, Hold: release})

	srv.StallConfirmingNext(time.Minute) // gw-a's confirmation of the next message
	c.say("hold on box2")
	<-f.model.Arrived() // its turn runs on box2, recorded before it started
	srv.WaitFor(t, "gw-a's poll confirming it, held", func() bool {
		for _, call := range srv.Calls("getUpdates") {
			if call.Error == "stalled" {
				return true
			}
		}
		return false
	})
	a.signal(syscall.SIGKILL)
	<-a.exited
	b.awaitLog(regexp.MustCompile(`lease taken: this gateway is active" gateway=gw-b`))
	// The conversation's messages are handled in order: once /help is
	// answered, the message that came again has been.
	c.say("/help")
	c.expect(`Commands:`)
	if !strings.Contains(b.stderr.String(), "message delivered again after a takeover") {
		t.Errorf("gw-b did not drop the message gw-a had taken; chat:\n%s\ngw-b's log:\n%s", c.dump(), b.stderr.String())
	}
	close(release)
	c.expect(`Held on box2\.`)
	if got := c.dump(); strings.Count(got, "Held on box2.") != 1 || strings.Contains(got, "A turn was lost") || strings.Contains(got, "Queued") {
		t.Errorf("want the followed turn's one reply, nothing reported lost nor queued:\n%s", got)
	}
	if n := len(srv.Conflicts()); n != 0 {
		t.Errorf("two gateways polled Telegram at once: %d conflicts", n)
	}
}

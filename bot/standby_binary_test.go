package bot_test

import (
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

// Two jakebot processes on one NATS server and the Telegram fake: the
// active one is SIGKILLed, so nothing of it hands over; its lease expires
// and the standby takes over, answering the conversation, which it finds
// in NATS. Never two pollers.
func TestStandbyTakesOverFromAKilledGateway(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Hello from gw-a."}}, plugintest.Reply{Text: []string{"Hello from gw-b."}})
	url := startNATS(t)
	srv := telegramtest.New(t)
	env := func(name string) []string {
		return f.binEnv("NATS_URL="+url, "GATEWAY_NAME="+name, "FAILOVER_AFTER=2s", "APPROVALS=auto", "WARM_TTL=0",
			"TELEGRAM_TOKEN="+telegramtest.Token, "TELEGRAM_API_ENDPOINT="+srv.Endpoint(),
			"TELEGRAM_ALLOWED_USERS="+strconv.FormatInt(telegramUsers[owner].ID, 10),
			"TELEGRAM_POLL_TIMEOUT=1s", "TELEGRAM_EDIT_INTERVAL=10ms", "TELEGRAM_GROUP_WRITES_PER_MINUTE=100000")
	}
	a := startBinary(t, f.workdir, env("gw-a"))
	a.awaitLog(regexp.MustCompile(`lease taken: this gateway is active" gateway=gw-a`))
	b := startBinary(t, f.workdir, env("gw-b"))
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

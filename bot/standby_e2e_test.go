package bot_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote"
	"github.com/jake-bot/jake-bot/plugins/remote/remotetest"
)

// Two gateways on one NATS server (issue 45): one active on the Telegram
// fake, the other standing by; a runner box2. These tests run them in
// this process, each a bot.Run as the binary runs it.

// failover is the lease's time to live in these tests (FAILOVER_AFTER):
// the server's expiry of the key, in real time, is what the standby waits
// for.
const failover = 2 * time.Second

// gatewayOn is gateway name's configuration, on the NATS server at url
// and the Telegram fake srv, with the fixture's Claude Code for the turns
// it runs itself.
func gatewayOn(f *fixture, name, url string, srv *telegramtest.Server) bot.Config {
	cfg := f.config()
	cfg.Approvals = "auto"
	cfg.NATS = remote.Config{URL: url, GatewayName: name, FailoverAfter: failover}
	cfg.Telegram = telegram.Config{Token: telegramtest.Token,
		AllowedUsers: telegram.UserIDs{telegramUsers[owner].ID, telegramUsers[stranger].ID}, APIEndpoint: srv.Endpoint(),
		EditInterval: fastWrites, GroupWritesPerMinute: 100_000, PollTimeout: time.Second}
	return cfg
}

// topic is a chat in a new topic of the team's forum, on the gateway c
// runs.
func topic(c *chat, srv *telegramtest.Server, name string) *chat {
	return &chat{t: c.t, d: &telegramDriver{t: c.t, srv: srv, topic: srv.NewTopic(telegramTeam, name), logs: c.logs}, clock: c.clock, logs: c.logs}
}

// on is the same topic as t, on the gateway c runs.
func on(c *chat, t *chat) *chat {
	return &chat{t: c.t, d: t.d, clock: c.clock, logs: c.logs}
}

// awaitState waits until the state a gateway keeps in NATS holds every
// text in want.
func awaitState(t *testing.T, url string, want ...string) {
	t.Helper()
	if !awaitSavedState(t, url, func(v []byte) bool { return containsEach(string(v), want) }) {
		t.Fatalf("the state in NATS never held %q", want)
	}
}

// awaitSavedState waits until the state a gateway keeps in NATS (its
// JSON, read back as a gateway reads it: gzipped, perhaps in parts) is
// one done says is it, and reports whether one came within patience.
func awaitSavedState(t *testing.T, url string, done func(state []byte) bool) bool {
	t.Helper()
	nc := natsConn(t, url)
	return awaitKV(t, url, "jakebot_state", "conversations", func([]byte) bool {
		info, err := remote.ReadState(context.Background(), nc)
		return err == nil && done(info.Data)
	})
}

// natsConn is a connection to the NATS server at url, closed at the
// test's end.
func natsConn(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// awaitKV waits until a value of keys (">": any) in the key-value bucket
// on the NATS server at url is one done says is it, and reports whether
// one came within patience.
func awaitKV(t *testing.T, url, bucket, keys string, done func(value []byte) bool) bool {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	w, err := kv.Watch(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for e := range w.Updates() {
		if e != nil && done(e.Value()) {
			return true
		}
	}
	return false
}

func containsEach(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// The active gateway is cut off from NATS in the middle of a turn on box2
// and of one of its own. It stops serving before its lease can expire,
// and the standby takes over: it finishes the reply on box2 from where
// the chat was, in order; tells the chat whose turn died with the cut-off
// gateway, offering to run it again; sends the schedule that fell due
// meanwhile, once; and answers a new message. The Telegram fake never saw
// two bots poll at once, and the cut-off gateway, back on NATS, stands by.
func TestStandbyTakesOverFromACutOffGateway(t *testing.T) {
	t.Parallel()
	stepTwo, never := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(never) })
	f := newFixture(t,
		plugintest.Reply{Text: []string{"Step one done."}, Tool: &plugintest.ToolCall{ID: "toolu_1", Name: "Bash",
			Input: map[string]any{"command": "true", "description": "Nothing"}}},
		plugintest.Reply{Text: []string{"Step two done."}, Hold: stepTwo},
		plugintest.Reply{Text: []string{"Never shown."}, Hold: never},
		plugintest.Reply{Text: []string{"Checked on schedule."}},
		plugintest.Reply{Text: []string{"Ran again."}},
		plugintest.Reply{Text: []string{"After the takeover."}})
	url := startNATS(t)
	startRunnerBot(t, url, f.config("--allowedTools", "Bash"))
	srv := telegramtest.New(t)
	link := remotetest.NewLink(t, url)

	cfgA := gatewayOn(f, "gw-a", link.URL(), srv)
	cfgA.Clock = coretest.NewManualClock()
	a := runChat(t, cfgA, &telegramDriver{t: t, srv: srv, logs: &logScan{t: t}})
	a.logs.waitLine(regexp.MustCompile(`lease taken: this gateway is active" gateway=(gw-a)`))
	// The standby's clock is the real one, long past the schedule's time
	// on gw-a's: it fell due while no gateway served.
	cfgB := gatewayOn(f, "gw-b", url, srv)
	b := runChat(t, cfgB, &telegramDriver{t: t, srv: srv, logs: &logScan{t: t}})
	b.logs.waitLine(regexp.MustCompile(`standing by: another gateway is active" gateway=gw-b active=(gw-a)`))

	remoteChat := topic(a, srv, "on box2")
	for {
		remoteChat.say("/runners")
		if got := remoteChat.expect(`Runners|No runner`); strings.Contains(got, "box2 (online): claude") {
			break
		}
	}
	remoteChat.say("/claude start box2:" + f.workdir)
	remoteChat.expect(`started in box2:` + f.workdir)
	localChat := topic(a, srv, "here")
	localChat.say("/claude start " + f.workdir)
	localChat.expect(`conversation started`)
	localChat.say("/at 30m check the build")
	localChat.expect(`Scheduled #1 \(once\)`)
	awaitState(t, url, "box2", "check the build")

	remoteChat.say("two steps")
	remoteChat.expect(`Step one done\.`)
	<-f.model.Arrived()
	<-f.model.Arrived() // step two's: held
	localChat.say("work here")
	<-f.model.Arrived() // held, in gw-a's own Claude Code

	link.Cut()
	b.logs.waitLine(regexp.MustCompile(`lease taken: this gateway is active" gateway=(gw-b)`))
	a.logs.mu.Lock()
	stoppedFirst := strings.Contains(a.logs.b.String(), "lease lost")
	a.logs.mu.Unlock()
	if !stoppedFirst {
		t.Error("gw-b took the lease before gw-a gave it up")
	}
	link.Heal()
	close(stepTwo)

	remoteChat, localChat = on(b, remoteChat), on(b, localChat)
	remoteChat.expect(`continued`, `Step two done\.`)
	localChat.expect(`⚠️ A turn was lost: gateway gw-a was answering @alice's message`, `work here`)
	localChat.expect(`Checked on schedule\.`)
	localChat.press(owner, "Run again")
	localChat.expect(`Ran again\.`)
	remoteChat.say("still there?")
	remoteChat.expect(`After the takeover\.`)
	remoteChat.say("/status")
	remoteChat.expect(`Gateway: gw-b, active since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`)
	a.logs.waitLine(regexp.MustCompile(`standing by: another gateway is active" gateway=gw-a active=(gw-b)`))

	if c := srv.Conflicts(); len(c) != 0 {
		t.Errorf("two gateways polled Telegram at once: %d conflicts", len(c))
	}
	remote := remoteChat.dump()
	if n := strings.Count(remote, "Step two done."); n != 1 {
		t.Errorf("step two was shown %d times:\n%s", n, remote)
	}
	if i, j := strings.Index(remote, "Step one done."), strings.Index(remote, "Step two done."); i < 0 || j < i {
		t.Errorf("the reply went on out of order:\n%s", remote)
	}
	local := localChat.dump()
	if n := strings.Count(local, "⏰ Schedule #1"); n != 1 {
		t.Errorf("the schedule was sent %d times:\n%s", n, local)
	}
	sent := 0
	for _, r := range f.model.Requests() {
		if strings.Contains(r.LastUserText(), "check the build") {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("the model got the scheduled message %d times, want once", sent)
	}
}

// runGateway runs jakebot with cfg until the test ends, and returns its
// logs.
func runGateway(t *testing.T, cfg bot.Config) *logScan {
	logs := &logScan{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx, cfg, bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: logs}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("jakebot exited with %v", err)
		}
	})
	return logs
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A standby gateway answers its web page with 503 and which gateway is
// active, and its health and metrics say it stands by.
func TestStandbyAnswersItsPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	url := startNATS(t)
	gateway := func(name string) bot.Config {
		cfg := f.config()
		cfg.NATS = remote.Config{URL: url, GatewayName: name, FailoverAfter: failover}
		cfg.Web = web.Config{Addr: "127.0.0.1:0", Token: web.Secret(webToken)}
		cfg.HealthAddr = "127.0.0.1:0"
		return cfg
	}
	a := runGateway(t, gateway("gw-a"))
	a.waitLine(regexp.MustCompile(`lease taken: this gateway is active" gateway=(gw-a)`))
	b := runGateway(t, gateway("gw-b"))
	b.waitLine(regexp.MustCompile(`standing by: another gateway is active" gateway=gw-b active=(gw-a)`))
	page := b.waitLine(regexp.MustCompile(`standby page" addr=(\S+)`))
	health := b.waitLine(regexp.MustCompile(`health and metrics" addr=(\S+)`))

	if code, body := get(t, "http://"+page+"/"); code != http.StatusServiceUnavailable ||
		!regexp.MustCompile(`^standby; active gateway is gw-a since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n$`).MatchString(body) {
		t.Errorf("the standby's page answered %d %q", code, body)
	}
	if code, body := get(t, "http://"+health+"/healthz"); code != http.StatusOK ||
		!strings.Contains(body, `"status":"standby"`) || !strings.Contains(body, `"active":"gw-a"`) {
		t.Errorf("the standby's /healthz answered %d %q", code, body)
	}
	for _, tc := range []struct {
		logs *logScan
		want []string
	}{
		{b, []string{`jakebot_gateway_active{gateway="gw-b"} 0`, `jakebot_gateway_active_since_seconds{active="gw-a"} `}},
		{a, []string{`jakebot_gateway_active{gateway="gw-a"} 1`, `jakebot_gateway_active_since_seconds{active="gw-a"} `}},
	} {
		addr := tc.logs.waitLine(regexp.MustCompile(`health and metrics" addr=(\S+)`))
		_, metrics := get(t, "http://"+addr+"/metrics")
		for _, want := range tc.want {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics at %s lack %s", addr, want)
			}
		}
	}
}

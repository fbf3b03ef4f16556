package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// documentedConfig is the server configuration README.md gives, as
// written there, with its passwords set.
func documentedConfig(t *testing.T) *server.Options {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Permissions")
	_, block, ok := strings.Cut(section, "```\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 || !strings.Contains(block, "authorization") {
		t.Fatal("README.md's Permissions section has no configuration block")
	}
	conf := "GATEWAY_PASSWORD: gw-secret\nBOX2_PASSWORD: b2-secret\nBOX3_PASSWORD: b3-secret\n" + block
	path := filepath.Join(t.TempDir(), "nats-server.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("README.md's configuration: %v", err)
	}
	return opts
}

// The documented configuration, on a real server with a real gateway
// and two runners: turns run on both, and box3's user, as a box3 taken
// over would use it, can neither send box2 a turn, nor write into box2's
// turns, nor speak as box2, nor read box2's subjects, the gateway's
// replies or the stream: the server refuses each.
func TestDocumentedPermissions(t *testing.T) {
	t.Parallel()
	w := &world{t: t, url: runNATS(t, documentedConfig(t)), convs: core.NewState(),
		gwNATS: remote.Config{User: "gateway", Password: "gw-secret"}}
	box2 := w.startRunner(runnerOpts{name: "box2", nats: remote.Config{User: "box2", Password: "b2-secret"}})
	box3 := w.startRunner(runnerOpts{name: "box3", nats: remote.Config{User: "box3", Password: "b3-secret"}})
	w.startGateway()
	w.waitOnline("box2")
	w.waitOnline("box3")
	on3 := core.ConversationKey{Platform: "fake", User: admin, Channel: "c3"}
	w.startOn(box2)
	w.sayAs(on3, "", "/claude start box3:"+box3.app())
	w.expect("started in box3:")
	w.say("ask")
	w.expect("rm -rf build")
	w.say("/allow")
	w.expect("the answer was allow")
	w.sayAs(on3, "", "hello")
	w.expect("box3 echo: hello")

	box2Hears := make(chan *nats.Msg, 16)
	listener := w.dial(remote.Config{User: "box2", Password: "b2-secret"})
	if _, err := listener.ChanSubscribe("jakebot.v4.runner.box2.>", box2Hears); err != nil {
		t.Fatal(err)
	}
	if err := listener.Flush(); err != nil {
		t.Fatal(err)
	}
	violations := make(chan error, 16)
	forger := w.dial(remote.Config{User: "box3", Password: "b3-secret"}, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		violations <- err
	}))
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			err = forger.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-violations:
			if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				t.Errorf("%s: %v, want a permissions violation", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the server let box3 %s", what)
		}
	}
	for _, subject := range []string{"jakebot.v4.runner.box2.turn", "jakebot.v4.runner.box2.events",
		"jakebot.v4.announce.box2", "$JS.API.CONSUMER.CREATE.jakebot_events", "$KV.jakebot_turns.forged"} {
		refused("publish to "+subject, forger.Publish(subject, []byte(`{"id":"forged","name":"box2"}`)))
	}
	for _, subject := range []string{"jakebot.v4.runner.box2.>", "jakebot.v4.runner.*.events", "_INBOX.>", "jakebot.v4.announce.*"} {
		_, err := forger.Subscribe(subject, func(*nats.Msg) {})
		refused("read "+subject, err)
	}
	if err := listener.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-box2Hears:
		t.Errorf("box2 heard %s: %s", m.Subject, m.Data)
	default:
	}
}

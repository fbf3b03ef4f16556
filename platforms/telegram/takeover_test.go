package telegram

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote"
	"github.com/jake-bot/jake-bot/plugins/remote/remotetest"
)

// gateway is one process of the bot as a standby setup runs it: the
// adapter polling the Telegram fake, a router recording the messages it
// takes in NATS (remote.LocalTurns, the bucket a gateway that takes over
// reads). Its adapter has a clock of its own, on which only its poll loop
// waits.
type gateway struct {
	t      *testing.T
	bot    *Adapter
	router *core.Router
	plugin *plugintest.Scripted
	clock  *coretest.ManualClock
	cancel context.CancelFunc
	done   chan error
}

// site is what the gateways of one test share: the Telegram fake, the
// NATS server, and the conversations and their root (in NATS and on a
// shared disk in a real setup).
type site struct {
	srv   *telegramtest.Server
	url   string
	convs *core.State
	roots []string
}

func newSite(t *testing.T) *site {
	roots, err := core.NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return &site{srv: telegramtest.New(t), url: remotetest.NATS(t), convs: core.NewState(), roots: roots}
}

// startGateway starts gateway name on s. Before its router sees a
// message, before (if set) is called with it: the moment between the
// adapter handing an update on and the router taking it.
func startGateway(t *testing.T, s *site, name string, plugin *plugintest.Scripted, before func(core.Message)) *gateway {
	t.Helper()
	nc, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	taken, err := remote.OpenLocalTurns(context.Background(), nc, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &gateway{t: t, plugin: plugin, clock: coretest.NewManualClock(), done: make(chan error, 1)}
	cfg := Config{Token: telegramtest.Token, AllowedUsers: UserIDs{alice.ID}, APIEndpoint: s.srv.Endpoint()}
	if g.bot, err = New(cfg, Options{Plugins: []core.Plugin{plugin}, Clock: g.clock}); err != nil {
		t.Fatal(err)
	}
	reg, err := core.NewRegistry(plugin)
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	cfg.Grant(access)
	g.router = core.NewRouter(context.Background(), core.RouterConfig{Plugins: reg, Access: access, Roots: s.roots, LocalTurns: taken}, s.convs)
	handler := g.router.Attach(g.bot)
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	go func() {
		g.done <- g.bot.Run(ctx, func(ctx context.Context, m core.Message) {
			if before != nil {
				before(m)
			}
			handler(ctx, m)
		})
	}()
	t.Cleanup(func() {
		g.stop()
		g.router.Shutdown()
		g.router.Wait()
	})
	return g
}

// stop ends the adapter's Run and waits for it.
func (g *gateway) stop() {
	g.cancel()
	select {
	case err := <-g.done:
		if err != nil {
			g.t.Errorf("Run: %v", err)
		}
		g.done <- nil
	case <-time.After(30 * time.Second):
		g.t.Fatal("Run did not return after cancel")
	}
}

// await waits until cond holds, checking again whenever the fake or g's
// clock moves.
func (g *gateway) await(srv *telegramtest.Server, what string, cond func() bool) {
	g.t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-srv.Changed():
		case <-g.clock.Waiting():
		case <-deadline:
			g.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// polledPast reports whether a getUpdates asked for an offset past
// update id, which confirms it.
func polledPast(srv *telegramtest.Server, id int) bool {
	for _, c := range srv.Calls("getUpdates") {
		if off, _ := strconv.Atoi(c.Params.Get("offset")); off > id {
			return true
		}
	}
	return false
}

// startConversation starts alice's conversation in her private chat.
func startConversation(t *testing.T, srv *telegramtest.Server) {
	t.Helper()
	dm := alice.Private()
	started := srv.UserSays(dm, alice, 0, "/claude start")
	srv.WaitFor(t, "the conversation started, its update confirmed", func() bool {
		ms := srv.Messages(dm.ID)
		return len(ms) > 0 && strings.Contains(ms[0].Text, "started") && srv.Confirmed() >= started
	})
}

// An update handed on but not yet taken by the router (not recorded) is
// not confirmed: a gateway killed then leaves it with Telegram, and the
// one that takes over gets it and answers it. Before, the adapter
// confirmed it with its next poll, and it was lost with the gateway.
func TestAnUpdateNotYetTakenIsNotConfirmed(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	srv := s.srv
	arrived, release := make(chan struct{}), make(chan struct{})
	a := startGateway(t, s, "gw-a", newScripted(), func(m core.Message) {
		if m.Text == "hello" {
			close(arrived)
			<-release // the moment before the router records it, held
		}
	})
	t.Cleanup(func() { close(release) }) // before gw-a stops, which waits for it
	startConversation(t, srv)
	hello := srv.UserSays(alice.Private(), alice, 0, "hello")
	<-arrived
	// Wait until gw-a's poll loop has moved on: it polled again, or it
	// waits on its clock for the update to settle.
	a.await(srv, "gw-a polling again or waiting", func() bool { return polledPast(srv, hello) || a.clock.Pending() > 0 })
	if polledPast(srv, hello) || srv.Confirmed() >= hello {
		t.Fatalf("gw-a confirmed update %d (Telegram's confirmed id: %d) before its router took it", hello, srv.Confirmed())
	}
	// Another chat's update, after hello's, is answered meanwhile, but
	// not confirmed either: the offset moves over settled updates in a row.
	srv.UserSays(team, alice, 0, "/help")
	a.clock.Advance(openWhilePolling) // gw-a asks for other chats' updates
	a.await(srv, "the help, and gw-a waiting again", func() bool { return len(srv.Messages(team.ID)) > 0 && a.clock.Pending() > 0 })
	polls := len(srv.Calls("getUpdates"))
	a.clock.Advance(openWhilePolling) // and again, with the help settled
	a.await(srv, "gw-a's poll, and gw-a waiting again (or long polling)", func() bool {
		return len(srv.Calls("getUpdates")) > polls && (a.clock.Pending() > 0 || polledPast(srv, hello))
	})
	if polledPast(srv, hello) || srv.Confirmed() >= hello {
		t.Fatalf("gw-a confirmed update %d (Telegram's confirmed id: %d) with a later one, before its router took it", hello, srv.Confirmed())
	}

	// gw-a dies here, its router never reached; gw-b takes over.
	b := startGateway(t, s, "gw-b", &plugintest.Scripted{}, nil)
	select {
	case turn := <-b.plugin.Started():
		if turn.Prompt != "hello" {
			t.Errorf("gw-b ran %q, want hello", turn.Prompt)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("gw-b never got the update gw-a had not confirmed; calls: %s%s", srv.Calls("getUpdates"), said(srv))
	}
	srv.WaitFor(t, "gw-b's answer", func() bool { return strings.Contains(said(srv), "echo: hello") })
}

// An update the router took (recorded) that comes again, because the
// gateway was killed before it confirmed it, is not answered twice: the
// gateway that takes over tells its chat it was lost, with Run again, and
// drops the update. Before, it told the chat and also ran the message.
func TestAnUpdateTakenComesAgainAndIsNotAnsweredTwice(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	srv := s.srv
	a := startGateway(t, s, "gw-a", newScripted(), nil)
	startConversation(t, srv)
	// gw-a's poll after hello's is held without confirming anything, as
	// if gw-a were killed before it reached Telegram.
	srv.StallNext("getUpdates", time.Minute)
	hello := srv.UserSays(alice.Private(), alice, 0, "hello")
	<-a.plugin.Started() // hello's turn runs, recorded
	srv.WaitFor(t, "gw-a's poll after hello", func() bool {
		for _, c := range srv.Calls("getUpdates") {
			if c.Error == "stalled" {
				return true
			}
		}
		return false
	})
	srv.StallNext("getUpdates", 0) // and its last one, as it stops
	a.stop()
	if got := srv.Confirmed(); got >= hello {
		t.Fatalf("Telegram confirmed update %d, want hello's (%d) not confirmed", got, hello)
	}

	// gw-a's turn never ends (it died with it); gw-b takes over.
	b := startGateway(t, s, "gw-b", &plugintest.Scripted{}, nil)
	srv.WaitFor(t, "gw-b confirmed hello's update, and told the chat", func() bool {
		return srv.Confirmed() >= hello && strings.Contains(said(srv), "A turn was lost: gateway gw-a")
	})
	if turns := b.plugin.Turns(); len(turns) != 0 {
		t.Errorf("gw-b ran %q again, which gw-a had taken: answered twice", turns[0].Prompt)
	}
	if n := len(srv.Messages(alice.ID)); n != 2 {
		t.Errorf("the chat has %d messages, want the start and the lost notice:\n%s", n, said(srv))
	}
}

// said is what the bot wrote to alice, a message a line.
func said(srv *telegramtest.Server) string {
	var b strings.Builder
	for _, m := range srv.Messages(alice.ID) {
		b.WriteString(m.Text + "\n")
	}
	return b.String()
}

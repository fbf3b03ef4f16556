package remote_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// The messages a gateway took are recorded until their replies end, one
// record per message (a conversation may have one running and one
// waiting): what a gateway that died left is handed over once, per
// platform, to the next; a gateway that stepped down (Keep) leaves every
// message it had.
func TestLocalTurnsLeftByADeadGateway(t *testing.T) {
	t.Parallel()
	url := runNATS(t, nil)
	open := func(name string) *remote.LocalTurns {
		l, err := remote.OpenLocalTurns(context.Background(), connect(t, url), name, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	turn := func(platform, user, id, text string) core.LocalTurn {
		return core.LocalTurn{Key: core.ConversationKey{Platform: platform, User: user, Channel: "c/1.x"}, ID: id, From: user, Text: text, ByPerson: true}
	}
	a := open("gw-a")
	running, waiting := turn("telegram", "1001", "m1", "fix it"), turn("telegram", "1001", "m2", "then test it")
	other, ended := turn("slack", "U1", "m3", "test it"), turn("telegram", "1002", "m4", "done")
	for _, lt := range []core.LocalTurn{running, waiting, other, ended} {
		a.Began(lt)
	}
	a.Ended(ended)

	b := open("gw-b")
	lost := b.Lost("telegram")
	texts := map[string]bool{}
	for _, lt := range lost {
		if lt.Key != running.Key || lt.Gateway != "gw-a" || !lt.ByPerson {
			t.Errorf("Lost(telegram) has %+v, want gw-a's messages in %s", lt, running.Key)
		}
		texts[lt.Text] = true
	}
	if len(lost) != 2 || !texts["fix it"] || !texts["then test it"] {
		t.Fatalf("Lost(telegram) = %+v, want gw-a's running and waiting messages", lost)
	}
	if again := b.Lost("telegram"); len(again) != 0 {
		t.Errorf("Lost(telegram) again = %+v, want nothing", again)
	}
	if lost := b.Lost("slack"); len(lost) != 1 || lost[0].Key != other.Key {
		t.Errorf("Lost(slack) = %+v, want gw-a's slack turn", lost)
	}

	c := open("gw-c")
	if lost := append(c.Lost("telegram"), c.Lost("slack")...); len(lost) != 0 {
		t.Errorf("the next gateway found %+v, want the records removed once reported", lost)
	}
	c.Began(running)
	c.Keep()
	c.Ended(running)
	c.Began(turn("telegram", "1003", "m5", "refused after stepping down"))
	if lost := open("gw-d").Lost("telegram"); len(lost) != 1 || lost[0].Gateway != "gw-c" {
		t.Errorf("after Keep, the next gateway found %+v, want gw-c's turn, and nothing taken after Keep", lost)
	}
}

// The record of a message whose reply was delivered while NATS was out
// of reach, whose removal therefore failed, is removed once NATS answers
// again: left there, the next gateway to take over would tell the chat
// that an answered message was lost, and offer to run it again.
func TestARecordNotRemovedWhileNATSWasAwayIsRemovedOnceBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := func(port int) *server.Server { return serveNATS(t, &server.Options{Port: port, StoreDir: dir}) }
	s := start(-1)
	url, port := s.ClientURL(), s.Addr().(*net.TCPAddr).Port
	// No buffer while reconnecting: the removal fails rather than wait
	// for the server, as one does when JetStream is not back yet.
	nc := connect(t, url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond), nats.ReconnectBufSize(-1))
	a, err := remote.OpenLocalTurns(t.Context(), nc, "gw-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	answered := core.LocalTurn{Key: core.ConversationKey{Platform: "telegram", User: "1001", Channel: "c/1.x"}, ID: "m1", From: "1001", Text: "fix it", ByPerson: true}
	a.Began(answered)
	s.Shutdown()
	s.WaitForShutdown()
	a.Ended(answered)

	start(port)
	watcher := connect(t, url)
	js, err := jetstream.New(watcher)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), "jakebot_local_turns")
	if err != nil {
		t.Fatal(err)
	}
	w, err := kv.WatchAll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	bound := time.After(time.Minute)
	for removed := false; !removed; {
		select {
		case e := <-w.Updates():
			removed = e != nil && e.Operation() == jetstream.KeyValueDelete
		case <-bound:
			t.Fatal("the record of the answered message was never removed after NATS came back")
		}
	}
	if lost := func() []core.LocalTurn {
		b, err := remote.OpenLocalTurns(t.Context(), connect(t, url), "gw-b", nil)
		if err != nil {
			t.Fatal(err)
		}
		return b.Lost("telegram")
	}(); len(lost) != 0 {
		t.Errorf("the next gateway found %+v, want nothing: the message was answered", lost)
	}
}

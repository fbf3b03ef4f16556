package remote_test

import (
	"context"
	"testing"

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

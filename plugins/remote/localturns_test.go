package remote_test

import (
	"context"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// The turns a gateway runs itself are recorded until they end: what a
// gateway that died left is handed over once, per platform, to the next;
// a gateway that stepped down (Keep) leaves every turn it was running.
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
	turn := func(platform, user, text string) core.LocalTurn {
		return core.LocalTurn{Key: core.ConversationKey{Platform: platform, User: user, Channel: "c/1.x"}, From: user, Text: text, ByPerson: true}
	}
	a := open("gw-a")
	running, other, ended := turn("telegram", "1001", "fix it"), turn("slack", "U1", "test it"), turn("telegram", "1002", "done")
	for _, lt := range []core.LocalTurn{running, other, ended} {
		a.Began(lt)
	}
	a.Ended(ended.Key)

	b := open("gw-b")
	lost := b.Lost("telegram")
	if len(lost) != 1 || lost[0].Key != running.Key || lost[0].Text != "fix it" || lost[0].Gateway != "gw-a" || !lost[0].ByPerson {
		t.Fatalf("Lost(telegram) = %+v, want gw-a's running turn", lost)
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
	c.Ended(running.Key)
	if lost := open("gw-d").Lost("telegram"); len(lost) != 1 || lost[0].Gateway != "gw-c" {
		t.Errorf("after Keep, the next gateway found %+v, want gw-c's turn", lost)
	}
}

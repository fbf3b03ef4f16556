package telegram

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// With REACTIONS on, the user's message shows its turn's state with an
// emoji Telegram accepts (setMessageReaction replaces the one before):
// 👀 while it runs, 👍 once done. A 429 on a reaction loses nothing: the
// state is shown after retry_after, and the reply arrives (issue 30).
func TestReactionsShowTheTurnsState(t *testing.T) {
	t.Parallel()
	h := newHarnessRouting(t, func(rc *core.RouterConfig) { rc.Reactions = true })
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")
	h.srv.RateLimitNext("setMessageReaction", 3)
	h.srv.UserSays(dm, alice, 0, "hello")
	id := 0
	h.until("the turn's message reacted to", func() bool {
		for _, c := range h.srv.Calls("setMessageReaction") {
			if c.Error == "" {
				id, _ = strconv.Atoi(c.Params.Get("message_id"))
			}
		}
		return id > 0 && h.srv.Reaction(dm.ID, id) == "👀"
	})
	h.nextTurn().end()
	h.until("the done reaction", func() bool { return h.srv.Reaction(dm.ID, id) == "👍" })
	limited := 0
	for _, c := range h.srv.Calls("setMessageReaction") {
		switch {
		case strings.HasPrefix(c.Error, "Too Many Requests"):
			limited++
		case c.Error != "":
			t.Errorf("setMessageReaction refused: %s", c.Error)
		}
	}
	if limited != 1 {
		t.Errorf("%d reactions were rate limited, want 1", limited)
	}
	if v := h.srv.Violations(); len(v) > 0 {
		t.Errorf("writes during flood control: %+v", v)
	}
}

// Flood control is the chat's: while a 429 on a reply holds a group
// back, a reaction there (another user's turn starting) is not sent into
// it, where a request may lengthen the wait; it is shown once the wait
// has passed, and the reply arrives whole (issue 30).
func TestReactionsWaitOutTheChatsFloodControl(t *testing.T) {
	t.Parallel()
	h := newHarnessRouting(t, func(rc *core.RouterConfig) { rc.Reactions = true })
	h.says(team, alice, 0, "/claude start")
	h.says(team, carol, 0, "/claude start")
	h.drive = 10 * time.Second // edit intervals pass; the flood wait does not
	h.srv.UserSays(team, alice, 0, "first")
	first := h.srv.LastUserMessage(team.ID)
	tra := h.nextTurn()
	h.srv.WaitFor(t, "alice's 👀", func() bool { return h.srv.Reaction(team.ID, first) == "👀" })
	h.srv.RateLimitNext("sendMessage", 30)
	tra.say("working")
	h.until("the chat's flood control", func() bool { return h.bot.gate.blocked(team.ID) > 0 })
	tried := func() bool { return strings.Contains(h.logs.String(), "reaction rate limited") }
	if tried() {
		t.Fatal("a reaction was rate limited before carol's turn")
	}
	h.srv.UserSays(team, carol, 0, "second")
	second := h.srv.LastUserMessage(team.ID)
	// Carol's turn starts, and its 👀 is tried: the router says it waits
	// the flood control out (had the reaction been sent, the fake refused
	// it) before the clock passes the wait.
	var trc *turn
	deadline := time.After(30 * time.Second)
	for trc == nil || !tried() {
		select {
		case lt := <-h.plugin.Handed():
			trc = &turn{LiveTurn: lt, t: t}
		case <-h.clock.Waiting():
		case <-h.srv.Changed():
		case <-deadline:
			t.Fatalf("carol's turn started %v, its reaction tried %v; messages: %s", trc != nil, tried(), h.dump())
		}
		h.clock.AdvanceWithin(h.drive)
	}
	h.drive = -1
	tra.end()
	trc.end()
	h.until("both turns done", func() bool {
		return h.srv.Reaction(team.ID, first) == "👍" && h.srv.Reaction(team.ID, second) == "👍" && strings.Contains(h.dump(), "working")
	})
	if v := h.srv.Violations(); len(v) > 0 {
		t.Errorf("requests during flood control: %+v", v)
	}
}

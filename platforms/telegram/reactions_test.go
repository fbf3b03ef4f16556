package telegram

import (
	"strconv"
	"strings"
	"testing"

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

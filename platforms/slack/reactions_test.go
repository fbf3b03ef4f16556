package slack_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// With REACTIONS on, the user's message shows its turn's state through
// reactions.add and reactions.remove, one emoji at a time; a 429 on a
// reaction holds nothing and loses nothing: the state is shown after the
// Retry-After (issue 30).
func TestReactionsShowTheTurnsState(t *testing.T) {
	t.Parallel()
	h := start(t, setup{router: func(rc *core.RouterConfig) { rc.Reactions = true }})
	thread := h.startThread(alice, general)
	h.fake.RateLimit("reactions.remove", 2*time.Second, 1)
	posted := h.fake.Post(t, alice, general, thread, "hello")
	h.waitReply(general, thread, "hello")
	h.until("the done reaction alone", func() bool {
		m, _ := h.fake.Message(general, posted.TS)
		return slices.Equal(m.Reactions, []string{"white_check_mark"})
	})
	limited := 0
	for _, c := range h.fake.Calls() {
		if c.Method == "reactions.remove" && c.Error == "ratelimited" {
			limited++
		}
	}
	if limited != 1 {
		t.Errorf("%d reactions.remove calls were rate limited, want 1", limited)
	}
}

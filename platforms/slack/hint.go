package slack

import (
	"context"
	"fmt"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// hintEvery bounds the hints in one thread: anyone in the channel may
// write there, and each hint spends the bot's rate limit.
const hintEvery = 10 * time.Minute

// openingIn is the place a thread being opened in channel holds before
// its timestamp is known (see core.Holds).
func openingIn(channel string) string { return "opening in " + channel }

// unheard reports whether m, a plain reply in a thread of the bot's, is
// not for the router: nobody's conversation is in the thread (the bot
// restarted without its state, or it ended). Someone the router serves
// then gets a one-line hint, at most once per thread every hintEvery;
// anyone else, nothing, as people talking among themselves.
func (a *Adapter) unheard(ctx context.Context, m core.Message) bool {
	if core.IsCommand(m.Text) {
		return false
	}
	if _, ok := a.lookup.Conversation(m.Key); ok {
		return false
	}
	place := m.Key.Channel + "/" + m.Key.Thread
	if !a.admits(m.From) || !a.hinted.Take(place) {
		return true
	}
	hint := fmt.Sprintf("No conversation in this thread (the bot may have restarted): <@%s> start here, or <@%s> %s resume to continue one.",
		a.bot, a.bot, a.cfg.DefaultPlugin)
	if _, err := a.postRetrying(ctx, core.Target{Channel: m.Key.Channel, Thread: m.Key.Thread}, hint); err != nil {
		a.logger.Warn("hint in a thread without a conversation", "thread", place, "err", err)
	}
	return true
}

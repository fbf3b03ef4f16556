package discord

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// hintEvery bounds the hints in one thread: anyone allowed may write
// there, and each hint spends the bot's rate limit.
const hintEvery = 10 * time.Minute

func orphanHint(plugin string) string {
	return fmt.Sprintf("No conversation in this thread (the bot may have restarted): /%s start here, or /%s resume to continue one.", plugin, plugin)
}

// unheard answers a message the bot does not listen to (in a server, not
// in the author's conversation, not mentioning the bot) when it is in a
// thread the bot opened where nobody has a conversation, as after a
// restart without state: with one line saying how to go on, at most once
// per thread every hintEvery, and only to someone the router serves.
// Anywhere else, such messages are people talking among themselves.
func (a *Adapter) unheard(key core.ConversationKey, m *discordgo.Message) {
	probe := core.Message{Key: key}
	if m.Member != nil {
		probe.Allowed = a.cfg.roleAllowed(m.Member.Roles)
	}
	if a.hint == "" || !a.lookup.Admits(probe) || !a.hinted.Due(key.Channel) {
		return
	}
	if c, known := a.channels.Get(key.Channel); known && (!c.isThread() || c.owner != a.self()) {
		return // the common case, asking Discord nothing
	}
	a.inLane(key, func(ctx context.Context, _ core.Handler) {
		c, err := a.channelInfo(ctx, key.Channel)
		if err != nil {
			a.logger.Debug("no hint: cannot tell the channel's owner", "channel", key.Channel, "err", err)
			return
		}
		if !c.isThread() || c.owner != a.self() || a.inUse(key.Channel) || !a.hinted.Take(key.Channel) {
			return
		}
		if _, err := a.Send(ctx, core.Target{Platform: Name, Channel: key.Channel}, a.hint); err != nil {
			a.logger.Warn("hint in a thread without a conversation", "thread", key.Channel, "err", err)
		}
	})
}

// inUse reports whether anyone has a conversation in channel.
func (a *Adapter) inUse(channel string) bool {
	for _, e := range a.lookup.PlatformConversations(Name) {
		if e.Key.Channel == channel {
			return true
		}
	}
	return false
}

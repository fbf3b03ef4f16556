package discord

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// threadArchive is how long an idle thread stays in the channel list, in
// minutes (one day).
const threadArchive = 1440

// maxThreadName is Discord's limit on a channel name.
const maxThreadName = 100

// OpenThread opens a thread for a conversation the router starts in a
// server's text channel, and names it after the workdir and the plugin
// until its owner's first words. A slash command's deferred response is
// completed with a link to the thread. Elsewhere (a DM, a thread, threads
// off) it opens none.
func (a *Adapter) OpenThread(ctx context.Context, m core.Message, workdir, plugin string) (string, error) {
	if !a.cfg.Threads {
		return "", nil
	}
	info, err := a.channelInfo(ctx, m.Key.Channel)
	if err != nil {
		return "", fmt.Errorf("cannot tell the channel's type: %w", err)
	}
	if info.typ != discordgo.ChannelTypeGuildText && info.typ != discordgo.ChannelTypeGuildNews {
		return "", nil // already a thread, or a channel without threads
	}
	base := filepath.Base(workdir)
	hold, _ := ctx.Value(holdKey{}).(func(string))
	if hold == nil {
		hold = func(string) {}
	}
	hold(openingIn(m.Key.Channel))
	th, err := a.api.ThreadStartComplex(m.Key.Channel, &discordgo.ThreadStart{Name: threadName(base, plugin),
		Type: discordgo.ChannelTypeGuildPublicThread, AutoArchiveDuration: threadArchive}, discordgo.WithContext(ctx))
	if err != nil {
		return "", apiError("start thread", err)
	}
	hold(th.ID)
	a.channels.Set(th.ID, channelInfo{typ: th.Type, owner: a.self(), parent: m.Key.Channel})
	a.names.Set(th.ID, threadNaming{base: base, owner: m.Key.User})
	if p := a.interactionFor(m.ReplyTo); p != nil {
		a.complete(ctx, p, fmt.Sprintf("%s conversation in <#%s>", plugin, th.ID))
	}
	a.logger.Info("opened thread", "channel", m.Key.Channel, "thread", th.ID, "user", m.Key.User)
	return th.ID, nil
}

// threadNaming is a thread the adapter opened, waiting for its owner's
// first words.
type threadNaming struct {
	base  string // the workdir's name
	owner string // who opened it: nobody else names it
}

// nameThread renames a thread the adapter opened after its workdir and
// the first words of its owner's first prompt, once.
func (a *Adapter) nameThread(ctx context.Context, channel, user, prompt string) {
	naming, ok := a.names.Get(channel)
	if !ok || naming.owner != user {
		return
	}
	a.names.Delete(channel)
	name := threadName(naming.base, firstWords(prompt, 8))
	go func() {
		if _, err := a.api.ChannelEdit(channel, &discordgo.ChannelEdit{Name: name}, discordgo.WithContext(ctx)); err != nil {
			a.logger.Debug("rename thread", "thread", channel, "err", err)
		}
	}()
}

func threadName(base, words string) string {
	return core.Shorten(base+" · "+words, maxThreadName)
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// onThreadCreate notes a new thread's type, owner and parent: the gateway
// may announce a thread the bot is opening, and deliver its first
// message, before the call that opens it returns (see held).
func (a *Adapter) onThreadCreate(_ *discordgo.Session, ev *discordgo.ThreadCreate) {
	if ev.Channel != nil {
		a.channels.Set(ev.ID, channelInfo{typ: ev.Type, owner: ev.OwnerID, parent: ev.ParentID})
	}
}

// channelInfo returns a channel's type and owner, asking Discord once per
// channel.
func (a *Adapter) channelInfo(ctx context.Context, id string) (channelInfo, error) {
	if c, ok := a.channels.Get(id); ok {
		return c, nil
	}
	ch, err := a.api.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		return channelInfo{}, apiError("get channel", err)
	}
	c := channelInfo{typ: ch.Type, owner: ch.OwnerID, parent: ch.ParentID}
	a.channels.Set(id, c)
	return c, nil
}

// maxChannelTypes bounds the channels remembered; types and owners
// never change, so forgetting them only costs a lookup.
const maxChannelTypes = 10000

// channelInfo is what the adapter needs to know of a channel.
type channelInfo struct {
	typ           discordgo.ChannelType
	owner, parent string // a thread's
}

func (c channelInfo) isThread() bool {
	switch c.typ {
	case discordgo.ChannelTypeGuildPublicThread, discordgo.ChannelTypeGuildPrivateThread, discordgo.ChannelTypeGuildNewsThread:
		return true
	}
	return false
}

package discord

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// threadArchive is how long an idle thread stays in the channel list, in
// minutes (one day).
const threadArchive = 1440

// maxThreadName is Discord's limit on a channel name.
const maxThreadName = 100

// moveToThread opens a thread for a "/<plugin> start" in a server's text
// channel and moves msg into it: the conversation's key becomes the
// thread, and the router's replies go there. A slash command's deferred
// response is completed with a link to the thread. Anything else, or a
// start the router will refuse (an unknown user, a bad workdir), stays
// where it is, so no empty thread is left behind.
func (a *Adapter) moveToThread(ctx context.Context, msg core.Message, guildID string, p *interaction) core.Message {
	if !a.cfg.Threads || guildID == "" {
		return msg
	}
	cmd, err := a.commands.Parse(msg.Text)
	if err != nil || cmd.Name != core.CmdStart || (!msg.Allowed && !a.cfg.admits(msg.Key.User, nil)) {
		return msg
	}
	typ, err := a.channelType(ctx, msg.Key.Channel)
	if err != nil {
		a.logger.Warn("cannot tell the channel's type; no thread", "channel", msg.Key.Channel, "err", err)
		return msg
	}
	if typ != discordgo.ChannelTypeGuildText && typ != discordgo.ChannelTypeGuildNews {
		return msg // already a thread, or a channel without threads
	}
	// The router resolves the path for the new key, which has no
	// conversation yet, so against the default workdir.
	wd := a.defaultWorkdir()
	if cmd.Arg != "" {
		if wd, err = a.userRoots(msg.Key.User).Resolve(cmd.Arg, wd); err != nil {
			return msg // refused by the router: no empty thread
		}
	}
	plugin := a.plugins[cmd.Plugin]
	base := filepath.Base(wd)
	th, err := a.api.ThreadStartComplex(msg.Key.Channel, &discordgo.ThreadStart{Name: threadName(base, plugin.Name()),
		Type: discordgo.ChannelTypeGuildPublicThread, AutoArchiveDuration: threadArchive}, discordgo.WithContext(ctx))
	if err != nil {
		a.logger.Warn("cannot open a thread; the conversation stays in the channel", "channel", msg.Key.Channel,
			"err", apiError("start thread", err))
		return msg
	}
	a.channels.put(th.ID, th.Type)
	a.names.Set(th.ID, threadNaming{base: base, owner: msg.Key.User})
	if p != nil {
		a.complete(ctx, p, fmt.Sprintf("%s conversation in <#%s>", plugin.Name(), th.ID))
	}
	a.logger.Info("opened thread", "channel", msg.Key.Channel, "thread", th.ID, "user", msg.Key.User)
	msg.Key.Channel = th.ID
	msg.ReplyTo = ""
	return msg
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

// channelType returns a channel's type, asking Discord once per channel.
func (a *Adapter) channelType(ctx context.Context, id string) (discordgo.ChannelType, error) {
	if t, ok := a.channels.get(id); ok {
		return t, nil
	}
	ch, err := a.api.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		return 0, apiError("get channel", err)
	}
	a.channels.put(id, ch.Type)
	return ch.Type, nil
}

// maxChannelTypes bounds the cache; types never change, so forgetting
// them only costs a lookup.
const maxChannelTypes = 10000

// channelTypes caches channel types. The zero value is ready to use.
type channelTypes struct {
	mu sync.Mutex
	m  map[string]discordgo.ChannelType
}

func (c *channelTypes) get(id string) (discordgo.ChannelType, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[id]
	return t, ok
}

func (c *channelTypes) put(id string, t discordgo.ChannelType) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxChannelTypes {
		c.m = make(map[string]discordgo.ChannelType)
	}
	c.m[id] = t
}

package discord

import (
	"context"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/jake-bot/jake-bot/core"
)

// onMessage turns a MESSAGE_CREATE into a core.Message. In a server the
// bot listens only where the author has an active conversation (or one
// is being opened: see held), or when mentioned; in DMs it always
// listens. In a thread it opened where nobody's conversation is (after a
// restart without state) it answers with a hint (see unheard). Its own
// messages and other bots' are ignored, and a message seen twice (a
// resumed gateway replaying events) is dropped.
func (a *Adapter) onMessage(_ *discordgo.Session, ev *discordgo.MessageCreate) {
	m := ev.Message
	if m == nil || m.Author == nil || m.Author.Bot || m.Author.ID == a.self() {
		return
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return // system messages: thread created, pins, joins
	}
	if !a.seen.Add("m"+m.ID, struct{}{}) {
		a.logger.Debug("duplicate message dropped", "id", m.ID)
		return
	}
	key := core.ConversationKey{Platform: Name, User: m.Author.ID, Channel: m.ChannelID}
	text, mentioned := a.stripMention(m)
	// A message in a thread being opened waits for its conversation.
	gated, held := m.GuildID != "" && !mentioned, a.held(m.ChannelID)
	if gated && len(held) == 0 && !a.active(key) {
		a.unheard(key, m)
		return
	}
	files := a.attachments(m)
	if text == "" && len(files) == 0 {
		if !mentioned {
			return // no Message Content intent
		}
		text = "/help"
	}
	msg := core.Message{Key: key, ID: m.ID, UserName: displayName(m.Author), Text: text, Files: files}
	if m.Member != nil {
		msg.Allowed = a.cfg.roleAllowed(m.Member.Roles)
	}
	a.inLane(key, func(ctx context.Context, h core.Handler) {
		if !held.Wait(ctx) || gated && len(held) > 0 && !a.active(key) {
			return // the thread is someone else's conversation
		}
		if !core.IsCommand(text) && text != "" {
			a.nameThread(ctx, key.Channel, key.User, text)
		}
		a.handle(ctx, h, msg)
	})
}

// active reports whether key has a conversation.
func (a *Adapter) active(key core.ConversationKey) bool {
	_, ok := a.lookup.Conversation(key)
	return ok
}

// handle passes msg to the router's handler; the threads OpenThread opens
// meanwhile hold their messages until it returns, when their conversation
// is registered.
func (a *Adapter) handle(ctx context.Context, h core.Handler, msg core.Message) {
	hold, end := a.holds.Begin()
	defer end()
	h(context.WithValue(ctx, holdKey{}, hold), msg)
}

// holdKey is the context key of the hold of the handler call under way,
// which the router passes on to OpenThread; a call of the router's own (a
// schedule's) has none.
type holdKey struct{}

// held is what a message in channel waits for: the conversation of a
// thread being opened. Discord may announce the thread (THREAD_CREATE),
// and deliver its first message, before the call that opens it returns:
// until then, the thread's messages wait for every thread being opened
// in its parent.
func (a *Adapter) held(channel string) core.Held {
	if held := a.holds.Of(channel); len(held) > 0 {
		return held
	}
	if c, ok := a.channels.Get(channel); ok && c.parent != "" && c.owner == a.self() {
		return a.holds.Of(openingIn(c.parent))
	}
	return nil
}

// openingIn is the place a thread being opened in parent holds before
// its id is known.
func openingIn(parent string) string { return "opening in " + parent }

// stripMention removes mentions of the bot from m's content and reports
// whether there were any.
func (a *Adapter) stripMention(m *discordgo.Message) (string, bool) {
	self := a.self()
	text := m.Content
	mentioned := false
	for _, u := range m.Mentions {
		if u != nil && u.ID == self {
			mentioned = true
		}
	}
	if self != "" {
		for _, tag := range []string{"<@" + self + ">", "<@!" + self + ">"} {
			if strings.Contains(text, tag) {
				mentioned = true
				text = strings.ReplaceAll(text, tag, "")
			}
		}
	}
	return strings.TrimSpace(text), mentioned
}

// onInteraction handles slash commands, button presses and autocomplete.
// A command or button is acknowledged at once with a deferred response,
// in its own goroutine so the ack never waits behind earlier work, then
// passed on as the equivalent text command.
func (a *Adapter) onInteraction(_ *discordgo.Session, ev *discordgo.InteractionCreate) {
	i := ev.Interaction
	if i == nil || !a.seen.Add("i"+i.ID, struct{}{}) {
		return
	}
	user, roles := interactionUser(i)
	if user == nil {
		return
	}
	switch i.Type {
	case discordgo.InteractionApplicationCommandAutocomplete:
		if _, ctx, ok := a.handler(); ok {
			go a.autocomplete(ctx, i, user.ID, roles)
		}
		return
	case discordgo.InteractionApplicationCommand, discordgo.InteractionMessageComponent:
	default:
		return
	}
	text := commandText(i)
	if text == "" {
		return
	}
	key := core.ConversationKey{Platform: Name, User: user.ID, Channel: i.ChannelID}
	msg := core.Message{Key: key, ID: i.ID, UserName: displayName(user), Text: text, Allowed: a.cfg.roleAllowed(roles)}
	// Someone the router does not serve is about to be refused: defer
	// privately so that only they see the refusal.
	p := a.track(i, !a.lookup.Admits(msg))
	msg.ReplyTo = p.ref()
	go a.ack(p)
	held := a.held(i.ChannelID)
	a.inLane(key, func(ctx context.Context, h core.Handler) {
		select {
		case <-p.acked:
		case <-ctx.Done():
			return
		}
		if !held.Wait(ctx) {
			return
		}
		if p.ackErr != nil {
			// Without an ack the interaction token is useless; reply in
			// the channel instead.
			msg.ReplyTo = ""
		}
		a.handle(ctx, h, msg)
		a.finish(ctx, p)
	})
}

// inLane runs job with the router's handler in key's lane, so one
// user's messages in one place reach the router in the order sent.
func (a *Adapter) inLane(key core.ConversationKey, job func(context.Context, core.Handler)) {
	h, ctx, ok := a.handler()
	if !ok {
		return
	}
	a.lanes.Do(key, func() { job(ctx, h) })
}

func interactionUser(i *discordgo.Interaction) (*discordgo.User, []string) {
	if i.Member != nil && i.Member.User != nil {
		return i.Member.User, i.Member.Roles
	}
	return i.User, nil
}

func displayName(u *discordgo.User) string {
	if u.GlobalName != "" {
		return u.GlobalName
	}
	return u.Username
}

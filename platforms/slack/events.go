package slack

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
)

// inbound is what one envelope asks of the router.
type inbound struct {
	// queue orders the work: messages of one thread run in order.
	queue string
	// parent, when set, is a thread parent to post first; the messages
	// then belong to its thread.
	parent        string
	channel, user string
	msgs          []core.Message
	// held is what the messages wait for: the start of the conversation
	// in a thread being opened.
	held core.Held
	// reply is a plain message in a thread: without a conversation there,
	// it gets a hint rather than reaching the router.
	reply bool
}

var newThreads atomic.Int64

// inbound reads an envelope's message. It reports false for events that
// are not for the bot (chatter, its own posts, edits) and for events and
// messages it has already seen.
func (a *Adapter) inbound(ev socketmode.Event) (inbound, bool) {
	switch data := ev.Data.(type) {
	case slack.SlashCommand:
		return a.slashCommand(data)
	case slack.InteractionCallback:
		return a.press(data)
	case slackevents.EventsAPIEvent:
		if cb, ok := data.Data.(*slackevents.EventsAPICallbackEvent); ok && cb.EventID != "" {
			if !a.seen.Add("event:"+cb.EventID, struct{}{}) {
				a.logger.Debug("dropped a redelivered event", "event", cb.EventID)
				return inbound{}, false
			}
		}
		var files []core.Attachment
		if ev.Request != nil {
			files = a.attachments(eventFiles(ev.Request.Payload))
		}
		switch e := data.InnerEvent.Data.(type) {
		case *slackevents.AppMentionEvent:
			return a.mention(e, files)
		case *slackevents.MessageEvent:
			return a.message(e, files)
		}
	}
	return inbound{}, false
}

func (a *Adapter) slashCommand(c slack.SlashCommand) (inbound, bool) {
	if c.TriggerID != "" && !a.seen.Add("trigger:"+c.TriggerID, struct{}{}) {
		return inbound{}, false
	}
	text := c.Command
	if args := plainText(c.Text); args != "" {
		text += " " + args
	}
	m := core.Message{ID: c.TriggerID, Text: text, From: c.UserID} // no UserName: see press
	if isDM(c.ChannelID) {
		m.Key = core.ConversationKey{Platform: Name, User: c.UserID, Channel: c.ChannelID}
		return inbound{queue: c.ChannelID + "/", msgs: []core.Message{m}}, true
	}
	m.Key = core.ConversationKey{Platform: Name, Channel: c.ChannelID}
	switch a.scope(text) {
	case core.ScopeNewConversation:
		// No parent for someone the router will refuse: the refusal is
		// private, so the channel should see nothing either.
		if a.admits(c.UserID) {
			return inbound{
				queue:   "new/" + strconv.FormatInt(newThreads.Add(1), 10),
				parent:  fmt.Sprintf("<@%s> `%s`", c.UserID, formatter.SlackEscape(text)),
				channel: c.ChannelID, user: c.UserID,
				msgs: []core.Message{m},
			}, true
		}
	case core.ScopeConversation:
		m.Key.Thread, _ = a.lastUsed.Get(c.ChannelID + "/" + c.UserID)
	}
	return inbound{queue: c.ChannelID + "/" + m.Key.Thread, msgs: []core.Message{m}}, true
}

// mention reads an app_mention event; files are the files shared with it,
// which come with the mention only (its message event is dropped).
func (a *Adapter) mention(e *slackevents.AppMentionEvent, files []core.Attachment) (inbound, bool) {
	if e.BotID != "" || e.User == "" || e.User == a.bot || !a.seen.Add("message:"+e.Channel+"/"+e.TimeStamp, struct{}{}) {
		return inbound{}, false
	}
	if isDM(e.Channel) {
		return a.direct(e.Channel, e.User, e.TimeStamp, e.Text, files), true
	}
	text := a.clean(e.Text)
	m := core.Message{ID: e.TimeStamp, Text: text, ReplyTo: e.TimeStamp, From: e.User, Files: files}
	thread, topLevel := e.ThreadTimeStamp, e.ThreadTimeStamp == ""
	cmd, isCmd := a.mentionCommand(text)
	if topLevel {
		thread = e.TimeStamp
		if last, ok := a.lastUsed.Get(e.Channel + "/" + e.User); ok && isCmd && a.scope(cmd) == core.ScopeConversation {
			thread = last
		}
	}
	m.Key = core.ConversationKey{Platform: Name, Channel: e.Channel, Thread: thread}
	allowed := a.admits(e.User)
	msgs := []core.Message{m}
	switch {
	case isCmd:
		msgs[0].Text = cmd
	case text == "" && len(files) == 0:
		msgs[0].Text = "/help"
	case topLevel && allowed:
		// A request to the bot in the channel starts a conversation with
		// the default plugin in the mention's thread, and runs.
		start := m
		start.Text, start.Files = "/"+a.cfg.DefaultPlugin+" start", nil
		msgs = []core.Message{start, m}
	}
	if allowed && (topLevel && !isCmd || a.scope(msgs[0].Text) == core.ScopeNewConversation) {
		a.threads.Set(e.Channel+"/"+thread, struct{}{})
	}
	if allowed {
		a.lastUsed.Set(e.Channel+"/"+e.User, thread)
	}
	return inbound{queue: e.Channel + "/" + thread, msgs: msgs}, true
}

// message reads a message event; files are the files shared with it
// (subtype file_share), and such a message may have no text.
func (a *Adapter) message(e *slackevents.MessageEvent, files []core.Attachment) (inbound, bool) {
	switch e.SubType {
	case "", "thread_broadcast", "file_share":
	default:
		return inbound{}, false // edits, deletions, joins, bot messages
	}
	if e.BotID != "" || e.User == "" || e.User == a.bot {
		return inbound{}, false
	}
	if isDM(e.Channel) || e.ChannelType == slackevents.ChannelTypeIM {
		if !a.seen.Add("message:"+e.Channel+"/"+e.TimeStamp, struct{}{}) {
			return inbound{}, false
		}
		return a.direct(e.Channel, e.User, e.TimeStamp, e.Text, files), true
	}
	// In channels, only replies in the bot's threads are for the bot;
	// mentions come again as app_mention events.
	thread := e.ThreadTimeStamp
	if thread == "" || a.mentions(e.Text) {
		return inbound{}, false
	}
	parent := ""
	if e.Message != nil {
		parent = e.Message.ParentUserId
	}
	_, known := a.threads.Get(e.Channel + "/" + thread)
	if !known && parent != a.bot {
		return inbound{}, false
	}
	held := a.holds.Of(e.Channel + "/" + thread)
	if len(held) == 0 && !known {
		// A reply may come before the post of its parent has returned.
		held = a.holds.Of(openingIn(e.Channel))
	}
	if !a.seen.Add("message:"+e.Channel+"/"+e.TimeStamp, struct{}{}) {
		return inbound{}, false
	}
	if a.admits(e.User) {
		a.lastUsed.Set(e.Channel+"/"+e.User, thread)
	}
	m := core.Message{
		Key:  core.ConversationKey{Platform: Name, Channel: e.Channel, Thread: thread},
		ID:   e.TimeStamp,
		Text: a.clean(e.Text), ReplyTo: e.TimeStamp, From: e.User, Files: files,
	}
	return inbound{queue: e.Channel + "/" + thread, msgs: []core.Message{m}, held: held, reply: true}, true
}

// direct reads a direct message: the whole DM is one conversation, keyed
// by its user, and a mention in it may carry a command like anywhere.
func (a *Adapter) direct(channel, user, ts, raw string, files []core.Attachment) inbound {
	text := a.clean(raw)
	if a.mentions(raw) {
		if cmd, ok := a.mentionCommand(text); ok {
			text = cmd
		}
	}
	m := core.Message{
		Key: core.ConversationKey{Platform: Name, User: user, Channel: channel},
		ID:  ts, Text: text, ReplyTo: ts, From: user, Files: files,
	}
	return inbound{queue: channel + "/", msgs: []core.Message{m}}
}

// deliver posts the thread parent an inbound needs, then hands its
// messages to the router, in order. The replies in a thread it opens
// wait until then: the conversation is registered there.
func (a *Adapter) deliver(ctx context.Context, in inbound, h core.Handler) {
	if !in.held.Wait(ctx) {
		return
	}
	if in.reply && a.unheard(ctx, in.msgs[0]) {
		return
	}
	if in.parent != "" {
		hold, end := a.holds.Begin()
		defer end()
		hold(openingIn(in.channel))
		ts, err := a.postRetrying(ctx, core.Target{Channel: in.channel}, in.parent)
		if err != nil {
			a.logger.Warn("post thread parent", "channel", in.channel, "err", err)
			a.tellPrivately(ctx, in.channel, in.user, "I could not start a thread here ("+slackError(err)+"). Invite me to the channel with /invite, or message me directly.")
			return
		}
		hold(in.channel + "/" + ts)
		a.threads.Set(in.channel+"/"+ts, struct{}{})
		a.lastUsed.Set(in.channel+"/"+in.user, ts)
		for i := range in.msgs {
			in.msgs[i].Key.Thread = ts
		}
	}
	for _, m := range in.msgs {
		h(ctx, m)
	}
}

func (a *Adapter) tellPrivately(ctx context.Context, channel, user, text string) {
	_, err := a.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(formatter.SlackEscape(text), false))
	if err != nil {
		a.logger.Warn("post ephemeral", "channel", channel, "err", err)
	}
}

// maxWaits bounds how often the adapter waits out a 429 itself, where no
// coordinator can do it for it.
const maxWaits = 5

// postRetrying posts, waiting out rate limits.
func (a *Adapter) postRetrying(ctx context.Context, to core.Target, text string) (string, error) {
	var ts string
	err := a.retrying(ctx, func() (err error) {
		ts, err = a.post(ctx, to, text)
		return err
	})
	return ts, err
}

// retrying calls f until it is not rate limited, at most maxWaits times,
// waiting as long as Slack asks.
func (a *Adapter) retrying(ctx context.Context, f func() error) error {
	for i := 0; ; i++ {
		err := f()
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || i == maxWaits {
			return err
		}
		a.logger.Info("rate limited", "retry_after", rl.RetryAfter)
		t := time.NewTimer(rl.RetryAfter)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

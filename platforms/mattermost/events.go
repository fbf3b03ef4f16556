package mattermost

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
)

// hintEvery bounds the hints in one place: anyone there may trigger one,
// and each spends the bot's rate limit.
const hintEvery = 10 * time.Minute

// postedData is a posted event's data: the post is JSON inside the JSON.
type postedData struct {
	ChannelType string `json:"channel_type"`
	SenderName  string `json:"sender_name"`
	Post        string `json:"post"`
}

// onPosted reads a post and hands it, as a message, to its thread's lane.
// Posts of the bot's own, of other bots and webhooks, and the server's
// own (joins, header changes) are dropped, as is a post seen before.
func (a *Adapter) onPosted(ctx context.Context, ev event, h core.Handler, work *lanes.PerKey[string]) {
	var d postedData
	var p post
	if json.Unmarshal(ev.Data, &d) != nil || json.Unmarshal([]byte(d.Post), &p) != nil {
		a.logger.Warn("a posted event that does not decode", "seq", ev.Seq)
		return
	}
	if p.ID == "" || p.UserID == "" || p.UserID == a.me().ID || p.Type != "" || isTrue(p.Props["from_bot"]) || isTrue(p.Props["from_webhook"]) {
		return
	}
	if !a.seen.Add(p.ID, struct{}{}) {
		return
	}
	name := strings.TrimPrefix(d.SenderName, "@")
	if name != "" {
		a.names.Set(p.UserID, name)
	}
	text, mentioned := a.clean(p.Message)
	m := core.Message{
		Key:      core.ConversationKey{Platform: Name, Channel: p.ChannelID, Thread: p.RootID},
		ID:       p.ID,
		UserName: name,
		Text:     text,
		From:     p.UserID,
		Files:    a.attachments(p),
	}
	direct := d.ChannelType == "D"
	switch {
	case core.IsCommand(text):
		m.Text = strings.TrimSpace(text)
		if m.Key.Thread == "" {
			m.Key.Thread = a.commandThread(m)
		}
		work.Do(m.Key.Channel+"/"+m.Key.Thread, func() { h(ctx, m) })
	case m.Key.Thread == "":
		// The top of a channel is people talking; the top of a direct
		// message, or a mention, is someone looking for the bot.
		if direct || mentioned {
			m.Key.Thread = m.ID
			work.Do(m.Key.Channel+"/"+m.Key.Thread, func() { a.hint(ctx, m, "") })
		}
	default:
		// A reply in a thread: a turn where a conversation is. Whether
		// one is there is asked in the thread's lane, once the messages
		// before it (the start) have been handled.
		work.Do(m.Key.Channel+"/"+m.Key.Thread, func() {
			if _, ok := a.lookup.Conversation(m.Key); ok {
				a.lastUsed.Set(m.Key.Channel+"/"+m.From, m.Key.Thread)
				h(ctx, m)
				return
			}
			if direct || mentioned {
				a.hint(ctx, m, "No conversation in this thread (the bot may have restarted).")
			}
		})
	}
}

// commandThread is the thread a command typed at the top of a channel
// acts in: a command that starts a conversation starts it in the post's
// own thread, one about the conversation acts in the thread its author
// used last there, and any other is answered in the post's thread.
func (a *Adapter) commandThread(m core.Message) string {
	last := m.Key.Channel + "/" + m.From
	switch a.commands.ScopeOf(m.Text) {
	case core.ScopeNewConversation:
		a.lastUsed.Set(last, m.ID)
	case core.ScopeConversation:
		if thread, ok := a.lastUsed.Get(last); ok {
			return thread
		}
	}
	return m.ID
}

// hint tells someone the router serves, in m's thread, how to start a
// conversation there; at most once per thread every hintEvery. Anyone
// else gets nothing: people talk among themselves.
func (a *Adapter) hint(ctx context.Context, m core.Message, why string) {
	if !a.lookup.Admits(m) || !a.hinted.Take(m.Key.Channel+"/"+m.Key.Thread) {
		return
	}
	text := strings.TrimSpace(fmt.Sprintf("%s To start a conversation, send ` /%s start [workdir]` (with a space before the slash, so that Mattermost sends it as a message); it lives in that post's thread. ` /%s resume` continues an earlier one.",
		why, a.plugin, a.plugin))
	if err := a.api.gate.wait(ctx); err != nil {
		return
	}
	if _, err := a.Send(ctx, m.Target(), text); err != nil {
		a.logger.Warn("hint", "channel", m.Key.Channel, "err", err)
	}
}

// clean returns a post's text without a leading mention of the bot, and
// whether the post mentions the bot at all.
func (a *Adapter) clean(s string) (string, bool) {
	mention := "@" + strings.ToLower(a.me().Username)
	lower := strings.ToLower(s)
	mentioned := a.me().Username != "" && mentions(lower, mention)
	trimmed := strings.TrimSpace(s)
	if mentioned && strings.HasPrefix(strings.ToLower(trimmed), mention) {
		rest := trimmed[len(mention):]
		if rest == "" || strings.IndexAny(rest[:1], " \t\n:,") == 0 {
			return strings.TrimLeft(rest, " \t\n:,"), true
		}
	}
	return s, mentioned
}

// mentions reports whether lower holds mention as a whole word: "@bot"
// but not "@bots" nor "x@bot".
func mentions(lower, mention string) bool {
	for i := 0; ; {
		j := strings.Index(lower[i:], mention)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(mention)
		before := start == 0 || !isNameByte(lower[start-1])
		after := end == len(lower) || !isNameByte(lower[end])
		if before && after {
			return true
		}
		i = end
	}
}

// isNameByte reports whether b may be part of a username.
func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

func isTrue(v any) bool { return v == true || v == "true" }

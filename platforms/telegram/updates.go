package telegram

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/jake-bot/jake-bot/core"
)

// callbackPrefix marks a core.Message's ReplyTo as a button press, whose
// callback query must be answered.
const callbackPrefix = "cbq:"

// handleUpdate turns one update into a message for the router and hands it
// to the conversationLanes. Updates the bot does not act on are dropped here.
// settle is called once the update may be confirmed (confirmations): when
// the router's handler returned, or at once for an update dropped. It
// reports false, and never settles, when the lanes refused the update
// because the adapter is stopping: Telegram is to deliver it again.
func (a *Adapter) handleUpdate(ctx context.Context, u update, d *conversationLanes, settle func()) bool {
	settled := make(chan struct{})
	if !a.seen.Add(u.UpdateID, settled) {
		// A webhook delivery Telegram repeated (the first one's answer was
		// late): it settles with the first, so that no 200 confirms an
		// update still on its way to the router.
		first, ok := a.seen.Get(u.UpdateID)
		if !ok {
			settle()
			return true
		}
		a.logger.Info("a delivery Telegram repeated waits for the first to settle", "update", u.UpdateID)
		go func() {
			select {
			case <-first:
			case <-ctx.Done():
			}
			settle()
		}()
		return true
	}
	settleFirst := settle
	settle = sync.OnceFunc(func() {
		close(settled)
		settleFirst()
	})
	switch {
	case u.Message != nil:
		m, ok := a.fromMessage(u.Message)
		if !ok {
			settle()
			return true
		}
		return d.inOrder(m.Key, func() {
			d.h(ctx, m)
			settle()
		})
	case u.CallbackQuery != nil:
		return a.fromCallback(ctx, u.CallbackQuery, d, settle)
	}
	settle()
	return true
}

// fromMessage converts a message: its text (or a file's caption) and its
// files. Commands addressed to another bot (/cmd@otherbot), messages from
// bots and messages with neither text nor a file are dropped.
func (a *Adapter) fromMessage(msg *message) (core.Message, bool) {
	files := a.attachments(msg)
	text := msg.Text
	if text == "" {
		text = msg.Caption // a file's words come as its caption
	}
	if msg.From == nil || msg.From.IsBot || msg.Chat == nil || strings.TrimSpace(text) == "" && len(files) == 0 {
		return core.Message{}, false
	}
	text, ok := a.addressed(text)
	if !ok {
		return core.Message{}, false
	}
	return core.Message{
		Key:      key(msg.From.ID, msg.Chat.ID, msg.topic()),
		ID:       strconv.Itoa(msg.MessageID),
		UserName: displayName(msg.From.FirstName, msg.From.UserName),
		Text:     text,
		Files:    files,
	}, true
}

// addressed strips "@thisbot" from a command (/start@jakebot) and a
// leading "@thisbot " mention from plain text. It reports false for a
// command meant for another bot.
func (a *Adapter) addressed(text string) (string, bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		if rest, ok := cutMention(text, a.self); ok {
			return rest, true
		}
		return text, true
	}
	word, rest, _ := strings.Cut(text, " ")
	cmd, bot, hasBot := strings.Cut(word, "@")
	if hasBot && strings.ToLower(bot) != a.self {
		return "", false
	}
	if rest == "" {
		return cmd, true
	}
	return cmd + " " + rest, true
}

// cutMention removes a leading @bot mention.
func cutMention(text, self string) (string, bool) {
	word, rest, _ := strings.Cut(text, " ")
	if strings.EqualFold(word, "@"+self) && strings.TrimSpace(rest) != "" {
		return strings.TrimSpace(rest), true
	}
	return text, false
}

// fromCallback turns a button press into the command its button stands
// for, and answers the callback query once the router has handled it (or
// at once when the button is stale). It settles and reports as
// handleUpdate does.
func (a *Adapter) fromCallback(ctx context.Context, q *callbackQuery, d *conversationLanes, settle func()) bool {
	if q.From == nil || q.Message == nil || q.Message.Chat == nil {
		a.logAnswer(q.ID, "", false)
		settle()
		return true
	}
	cmd, ok := a.choices.command(q.Data)
	if !ok {
		a.logAnswer(q.ID, "This button has expired; run the command again.", true)
		settle()
		return true
	}
	m := core.Message{
		Key:      key(q.From.ID, q.Message.Chat.ID, q.Message.topic()),
		ID:       q.ID,
		UserName: displayName(q.From.FirstName, q.From.UserName),
		Text:     cmd,
		ReplyTo:  callbackPrefix + q.ID,
	}
	return d.inOrder(m.Key, func() {
		d.h(ctx, m)
		settle()
		a.mu.Lock()
		done := a.answered[q.ID]
		delete(a.answered, q.ID)
		a.mu.Unlock()
		if !done {
			a.logAnswer(q.ID, "", false)
		}
	})
}

func (a *Adapter) logAnswer(id, text string, alert bool) {
	if err := a.answerCallback(id, text, alert); err != nil {
		a.logger.Warn("answer callback", "err", err)
	}
}

// key maps a Telegram place onto a conversation key: a private chat is the
// user's conversation, a forum topic is a conversation per user in that
// topic, and a plain group (or a forum's General topic) one per user in
// the group.
func key(user, chat int64, topic int) core.ConversationKey {
	k := core.ConversationKey{Platform: Name, User: strconv.FormatInt(user, 10), Channel: strconv.FormatInt(chat, 10)}
	if topic != 0 {
		k.Thread = strconv.Itoa(topic)
	}
	return k
}

func displayName(first, user string) string {
	if user != "" {
		return "@" + user
	}
	return first
}

package telegram

import (
	"encoding/json"
	"fmt"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// This file is the one place that speaks to the Bot API without the
// library's configs and types: v5 predates forum topics, so its configs
// cannot send message_thread_id and its types drop message_thread_id and
// is_topic_message. sendMessage and sendChatAction are built here by hand
// with MakeRequest, and updates are decoded here from the raw JSON into the
// library's types plus the missing fields.

// update is an update with the fields v5 lacks.
type update struct {
	tgbotapi.Update
	Message       *message       `json:"message"`
	CallbackQuery *callbackQuery `json:"callback_query"`
}

// message is a message with its forum topic.
type message struct {
	tgbotapi.Message
	ThreadID int  `json:"message_thread_id"`
	IsTopic  bool `json:"is_topic_message"`
}

// callbackQuery is a button press whose message keeps its topic.
type callbackQuery struct {
	tgbotapi.CallbackQuery
	Message *message `json:"message"`
}

// topic is the message's forum topic, or 0. In groups that are not forums
// a reply also carries a message_thread_id (the thread of replies), which
// is not a place of its own.
func (m *message) topic() int {
	if m.IsTopic {
		return m.ThreadID
	}
	return 0
}

// place is a chat and, in a forum, a topic; quote is the user's message
// a new message there replies to, or 0.
type place struct {
	chat   int64
	thread int
	quote  int
}

// replyParameters makes a message a reply (reply_parameters). Without
// allow_sending_without_reply Telegram refuses the message when the
// replied one is gone ("message to be replied not found"); with it, the
// message is sent as a plain one.
type replyParameters struct {
	MessageID                int  `json:"message_id"`
	AllowSendingWithoutReply bool `json:"allow_sending_without_reply"`
}

func (p place) params() tgbotapi.Params {
	ps := tgbotapi.Params{"chat_id": strconv.FormatInt(p.chat, 10)}
	ps.AddNonZero("message_thread_id", p.thread)
	return ps
}

// getUpdates long-polls for updates after offset.
func (a *Adapter) getUpdates(offset, limit int, timeoutSec int) ([]update, error) {
	ps := tgbotapi.Params{"allowed_updates": `["message","callback_query"]`}
	ps.AddNonZero("offset", offset)
	ps.AddNonZero("limit", limit)
	ps.AddNonZero("timeout", timeoutSec)
	resp, err := a.api.MakeRequest("getUpdates", ps)
	if err != nil {
		return nil, err
	}
	var ups []update
	if err := json.Unmarshal(resp.Result, &ups); err != nil {
		return nil, fmt.Errorf("decode updates: %w", err)
	}
	return ups, nil
}

// decodeUpdate decodes one update pushed to the webhook.
func decodeUpdate(body []byte) (update, error) {
	var u update
	err := json.Unmarshal(body, &u)
	return u, err
}

// sendMessage posts text in p. An empty parseMode sends plain text.
func (a *Adapter) sendMessage(p place, text, parseMode string, kb *tgbotapi.InlineKeyboardMarkup) (int, error) {
	ps := p.params()
	ps["text"] = text
	ps.AddNonEmpty("parse_mode", parseMode)
	ps.AddBool("disable_web_page_preview", true)
	if p.quote > 0 {
		if err := ps.AddInterface("reply_parameters", replyParameters{MessageID: p.quote, AllowSendingWithoutReply: true}); err != nil {
			return 0, err
		}
	}
	if kb != nil {
		if err := ps.AddInterface("reply_markup", kb); err != nil {
			return 0, err
		}
	}
	resp, err := a.api.MakeRequest("sendMessage", ps)
	if err != nil {
		return 0, err
	}
	var m tgbotapi.Message
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		return 0, fmt.Errorf("decode sent message: %w", err)
	}
	return m.MessageID, nil
}

// sendTyping shows the typing indicator in p for about five seconds.
// setReaction replaces the bot's reaction on message id with emoji.
func (a *Adapter) setReaction(p place, id int, emoji string) error {
	ps := tgbotapi.Params{"chat_id": strconv.FormatInt(p.chat, 10), "message_id": strconv.Itoa(id),
		"reaction": `[{"type":"emoji","emoji":"` + emoji + `"}]`}
	_, err := a.api.MakeRequest("setMessageReaction", ps)
	return err
}

func (a *Adapter) sendTyping(p place) error {
	ps := p.params()
	ps["action"] = tgbotapi.ChatTyping
	_, err := a.api.MakeRequest("sendChatAction", ps)
	return err
}

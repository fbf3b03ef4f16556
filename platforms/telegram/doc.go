// Package telegram is jake-bot's Telegram adapter: it receives messages and
// button presses through the Bot API (long polling, or a webhook) and
// writes replies as HTML messages that are edited while a turn streams.
//
// Private chats are one conversation per user; in a forum supergroup each
// topic is a conversation of its own. The adapter is built on
// github.com/go-telegram-bot-api/telegram-bot-api/v5, used through the
// small botAPI interface.
//
// Files: adapter.go is the core.Platform (Send, Edit, Typing, Refuse);
// run.go receives updates (long polling or webhook) and dispatches them in
// order per conversation; updates.go turns updates into core.Messages;
// choices.go offers inline buttons; gate.go holds back writes during flood
// control and beyond a group's budget; raw.go is the one place that
// handles forum topics (message_thread_id) by hand, as the v5 library
// predates them; errors.go classifies the Bot API's answers and keeps the
// token out of errors.
package telegram

// Package slack connects jake-bot to a Slack workspace over Socket Mode,
// so no public URL is needed.
//
// A conversation is a Slack thread. A slash command such as /claude start
// posts a thread parent in the channel and routes the command with the
// parent's ts as the ConversationKey's Thread; every later plain message in
// that thread is a turn. The key's User is empty, so any allowed user in
// the thread continues the same conversation (the thread is shared, as
// Slack users expect), while Message.From carries the author for the
// router's access check. A mention (@bot start …, or @bot with a request,
// which starts a conversation with the default plugin and runs the request)
// makes the mention's own thread the conversation. A direct message channel
// is one conversation, keyed by its user.
//
// Slack does not deliver app slash commands typed in threads, so inside a
// thread commands are written as mentions (@bot stop, @bot status,
// @bot conversation end); typed as slash commands in the channel, /stop,
// /status, /conversation end and /workdir apply to the thread the user
// last used there.
//
// Envelopes are acknowledged as soon as they arrive, then handled in a
// goroutine per thread, so messages of one thread keep their order and a
// slow thread holds up no other; redelivered envelopes, events and
// messages are dropped by id. The slack-go client reconnects on
// disconnect. Replies are rendered by formatter.Slack; a message Slack
// still refuses as msg_too_long is split into continuation messages that
// later edits keep up to date, and a 429 becomes a core.RateLimitError the
// coordinator waits out.
package slack

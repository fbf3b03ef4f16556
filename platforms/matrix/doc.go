// Package matrix connects jake-bot to a Matrix homeserver as a bot
// account logged in with an access token, through mautrix-go's client
// (maunium.net/go/mautrix).
//
// The bot joins the rooms an allowed user invites it to and rejects other
// invitations. In a direct chat (a room of the bot and one person) the
// room is one conversation, as a Telegram DM. In any other room a
// conversation is a thread (m.thread): a command at the room's top level
// ("/claude start ~/src/app") is the root of the thread the conversation
// lives in, and every later message in that thread is a turn. The key's
// User is empty, so any allowed user in the thread continues the same
// conversation, while Message.From carries the author for the router's
// access check.
//
// Replies are Matrix HTML (formatter.Matrix, format
// org.matrix.custom.html) sent as m.notice, which the default push rules
// keep quiet, and edited with m.replace events while a turn streams. The
// homeserver's 429 (M_LIMIT_EXCEEDED, retry_after_ms) is answered as a
// core.RateLimitError that the coordinator waits out, coalescing edits,
// and holds the adapter's other writes as long. A question notifies its
// author with an m.text that mentions them (m.mentions and a pill).
//
// Questions offer their choices as numbered reactions (m.annotation) the
// bot adds itself; a reaction by someone else is the choice's command from
// them, and typing the command works too. A turn's state is a reaction on
// the message that started it.
//
// End-to-end encrypted rooms are refused: the bot cannot read them, and
// says so in plain text once in a while when an allowed user writes there.
//
// Files: adapter.go is the core.Platform (Send, Edit, Typing, React,
// Notify); sync.go the /sync loop, invitations and messages; choices.go
// the numbered reactions; files.go downloads and uploads media; gate.go
// holds writes while the rate limit is spent.
package matrix

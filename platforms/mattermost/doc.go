// Package mattermost connects jake-bot to a Mattermost server as a bot
// account, over the server's REST API (v4) and its WebSocket event stream,
// spoken by hand: Mattermost's Go SDK is not on the module proxy, and the
// adapter needs a handful of calls.
//
// A conversation is a thread. A command typed at the top of a channel or
// a direct message (" /claude start ~/src/app": Mattermost's own clients
// refuse a message that starts with an unknown slash command, so users
// type a space before it; "@bot /claude start" works too) makes the thread
// of that post the conversation: the bot answers in it, and every later
// reply there is a turn. The key's User is empty, so any allowed user in
// the thread continues the same conversation, while Message.From carries
// the author for the router's access check.
//
// Replies are Mattermost markdown (formatter.Markdown), one post per page
// of at most 16383 runes, edited while a turn streams. The server's rate
// limit is the bot's across the whole server: a 429 (or an
// X-Ratelimit-Remaining of 0) holds every write until the time the server
// names, answered as a core.RateLimitError that the coordinator waits out.
//
// Questions carry interactive message buttons when MATTERMOST_ACTIONS_URL
// is set: the server posts each press to the bot's callback endpoint,
// which checks the secret the button's context carries (the server never
// shows it to clients). Without it, a question offers its choices as
// numbered reactions; typed answers work everywhere.
//
// The event stream is resumed after a drop (the server's reliable
// WebSockets: the stream's connection_id and the next sequence_number),
// so the posts made meanwhile are not lost.
//
// Files: adapter.go is the core.Platform (Send, Edit, Typing, React,
// Notify); api.go the REST client and its rate-limit gate; socket.go the
// WebSocket connection; events.go turns posts into core.Messages;
// choices.go offers buttons and reactions and serves the callbacks;
// files.go downloads and uploads files.
package mattermost

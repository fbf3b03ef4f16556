// Package discord connects jake-bot to Discord: a gateway connection
// receives slash commands, button presses and messages, and the REST API
// posts and edits the bot's replies. It is built on
// github.com/bwmarrin/discordgo, which only this package imports.
//
// Each interaction is acknowledged at once with a deferred response and
// completed with the command's reply; turn output is posted as ordinary
// channel messages with the bot token, since interaction tokens expire
// after 15 minutes. "/<plugin> start" in a text channel opens a thread and
// the conversation lives there. Rate limits are handled by core's
// StreamCoordinator: the adapter turns discordgo's blocking retry off and
// reports a 429 as a *core.RateLimitError.
//
// In Discord a thread is a channel, so a conversation key's Channel is the
// id of the channel or thread the conversation lives in, and its Thread is
// always empty. That also makes the coordinator's per-channel budget match
// Discord's per-channel limits.
package discord

// Package core is jake-bot's domain: the messages that arrive from chat
// platforms, the conversations they belong to, the events a coding CLI
// produces during a turn, and the router that connects them.
//
// core defines the two interfaces the rest of the program plugs into:
// Platform (a chat service such as Discord, or the local console) and Plugin
// (a coding CLI such as Claude Code). Adapters and plugins live in their own
// packages and depend on core; core depends on neither.
//
// A turn flows like this: a Platform calls the Router's Handle with a
// Message; the Router finds the conversation for the message's
// ConversationKey and runs its Plugin under a context.Context; the Plugin
// emits Events; a StreamCoordinator folds them into ResponseBlocks, asks the
// Platform to Render them into pages and sends or edits the pages, throttled
// to the Platform's Limits.
package core

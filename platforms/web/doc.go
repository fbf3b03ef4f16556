// Package web is the browser platform: jakebot serves a chat page (its
// assets embedded in the binary) on WEB_ADDR, and the page talks to the
// same router as every chat platform, with the same commands and policy.
//
// Sign-in is default deny: WEB_TOKEN, given once in the sign-in URL that
// Run prints at start, sets an HttpOnly, SameSite=Strict session cookie;
// without it every page, API call and stream answers 401. Requests that
// change something carry the session's CSRF token in a header and, when
// the browser sends one, an Origin of the page's own; streams refuse a
// foreign Origin.
//
// Replies stream over server-sent events as fast as the CLI writes: the
// page batches them to animation frames, so no edit throttle applies. An
// edit that only adds to a message's end is sent as what it adds, so a
// reply crosses the stream about once rather than once per edit. A
// stream starts with a snapshot of every conversation, so a reloaded page
// shows each one so far. Messages live in memory only; conversations
// outlive a restart in the router's state, under random ids, and the page
// lists them again (Options.Conversations).
package web

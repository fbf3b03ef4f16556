// Package codex runs OpenAI's Codex CLI as a jake-bot plugin: one-shot
// (`codex exec --json`), or, when the chat answers questions, through
// `codex app-server` (JSON-RPC on its stdin and stdout).
//
// parse.go turns the exec stream's events into core events and
// appitems.go the app-server's notifications, with no process in sight;
// appserver.go speaks the app-server's protocol, its approval requests
// becoming questions; run.go holds the arguments and runs each turn on
// the turn engine (cliproc), resuming the thread by id; history.go lists
// past threads from the rollout files under $CODEX_HOME/sessions. The
// formats are described in /work/shared/CLI-FORMATS.md and recorded from
// the pinned CLI in testdata/codex at the repository root. Recaptured from
// 0.171.0, the streams and app-server sessions there hold the same event
// types and members as 0.169.0's; its live-turn notifications (turn/steer,
// plan, token usage, rate limits) are in plugins/LIVE-TURNS.md.
package codex

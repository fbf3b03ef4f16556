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
//
// Behind the bot's sandbox (cliproc.Sandbox) Codex sees its whole
// $CODEX_HOME. Its own sandbox (workspace-write, read-only) is a bwrap of
// its own, which nests inside the bot's bwrap where the host allows nested
// user namespaces; elsewhere every command fails (ENOSPC), so the plugin
// runs it with danger-full-access there. Codex refuses to make the helper
// its sandbox executes (codex-linux-sandbox, linked under $CODEX_HOME)
// when $CODEX_HOME lies under TMPDIR ("Refusing to create helper binaries
// under temporary dir"), and its commands then fail with "bwrap: execvp
// codex-linux-sandbox": the bot's sandbox keeps the CLI's TMPDIR, private.
//
// A read-only turn (core.Turn.ReadOnly) runs in the read-only sandbox with
// approval policy never, on the thread and as the turn's own override
// (turn/start's sandboxPolicy), even where Codex's sandbox cannot nest in
// the bot's: its commands then fail ("error building bubblewrap command")
// rather than run unwalled. A write in it fails "Read-only file system",
// an escalation "approval policy is Never; reject command", and a patch
// "patch rejected: writing is blocked by read-only sandbox; rejected by
// user approval settings" (plugins/LIVE-TURNS.md).
package codex

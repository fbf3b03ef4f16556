// Package gemini runs Google's Gemini CLI as a jake-bot plugin through the
// Agent Client Protocol (`gemini --acp`, JSON-RPC on its stdin and stdout),
// whether the chat answers questions or not; one-shot
// (`gemini -p … -o stream-json`) only for a resumed session that cannot be
// loaded safely (see guardLoad).
//
// parse.go turns the one-shot stream's events into core events with no
// process in sight; acp.go and acptools.go speak ACP, its permission
// requests becoming questions; run.go holds the arguments and runs each
// turn on the turn engine (cliproc), resuming the session by id;
// history.go lists past sessions from the chat files under
// ~/.gemini/tmp/<project>/chats, session.go knows those files, and
// interrupted.go puts a stopped turn back in its session's file. The
// formats are described in /work/shared/CLI-FORMATS.md and recorded from
// the pinned CLI in testdata/gemini at the repository root.
//
// The CLI's shell tool refuses a command holding $(…), backticks, <(…) or
// $((…)) ("Command injection detected"), even in yolo mode: the plugin
// suite's shell probes avoid them.
//
// A read-only turn (core.Turn.ReadOnly, readonly.go) runs in plan mode
// (--approval-mode plan, which its ACP session announces as "Read-only
// mode"), every approval it asks for refused: plan mode has no shell and
// writes only in its plans folder under ~/.gemini, but leaves for the
// default mode when exit_plan_mode is approved (plugins/LIVE-TURNS.md).
package gemini

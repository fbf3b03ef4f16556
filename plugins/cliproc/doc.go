// Package cliproc runs coding CLIs for the plugins: one process per turn,
// and the one way a turn runs.
//
// The turn engine (CLI, Protocol, Link, Conn) spawns a plugin's CLI,
// feeds each line of its output to the plugin's Protocol, which maps it
// to core events, waits for the CLI and says how the turn ended
// (ending). A CLI that speaks a protocol on its stdin (Claude Code's
// control protocol, Codex's app-server, Gemini CLI's ACP) is opened
// before its message when the turn is warm (Conn): what it emits
// meanwhile waits for the turn, the message is handed over when both the
// turn runs and the protocol is ready for it, and cancelling the turn
// interrupts it through the protocol before anything is killed. A
// recorded session replays through the same Protocol (Replay). So a
// plugin holds only its CLI's arguments, protocol mapping and history.
//
// Underneath (Start, Process), each CLI runs in its own session and
// process group, stdin closed or a pipe for its protocol, stdout read as
// bounded lines, a bounded tail of stderr kept for error messages.
// Cancelling the turn's context sends SIGTERM to the whole group and
// SIGKILL after a grace period; when the CLI exits, whatever it left
// running is killed too: in its group, carrying its run's mark
// (JAKEBOT_RUN), or, once AdoptOrphans made the bot a child subreaper,
// handed to the bot as an orphan. What still holds its output after that
// (a descriptor passed to a stranger) holds it for outputGrace at most:
// the reads end with what the CLI wrote. So no process outlives its turn,
// and nothing holds a turn open.
// A CLI that only behaves interactively can run in a pseudo-terminal
// instead (Spec.PTY): the terminal is its stdin, stdout and stderr, and
// the same group kill and grace period apply.
package cliproc

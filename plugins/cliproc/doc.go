// Package cliproc runs a coding CLI as a child process for one turn: in
// its own process group, stdin closed, stdout read as bounded lines, a
// bounded tail of stderr kept for error messages. Cancelling the turn's
// context sends SIGTERM to the whole group and SIGKILL after a grace
// period; when the CLI exits, whatever it left running in its group is
// killed too, so no process outlives its turn.
//
// A CLI that only behaves interactively can run in a pseudo-terminal
// instead (Spec.PTY): the terminal is its stdin, stdout and stderr, and the
// same group kill and grace period apply.
package cliproc

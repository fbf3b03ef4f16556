// Package cliproc runs a coding CLI as a child process for one turn: in
// its own process group, stdin closed, stdout read as bounded lines, a
// bounded tail of stderr kept for error messages. Cancelling the turn's
// context sends SIGTERM to the whole group and SIGKILL after a grace
// period; when the CLI exits, whatever it left running is killed too: in
// its group, carrying its run's mark (JAKEBOT_RUN), or, once AdoptOrphans
// made the bot a child subreaper, handed to the bot as an orphan. What
// still holds its output after that (a descriptor passed to a stranger)
// holds it for outputGrace at most: the reads end with what the CLI
// wrote. So no process outlives its turn, and nothing holds a turn open.
//
// A CLI that only behaves interactively can run in a pseudo-terminal
// instead (Spec.PTY): the terminal is its stdin, stdout and stderr, and the
// same group kill and grace period apply.
package cliproc

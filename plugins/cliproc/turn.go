package cliproc

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/jake-bot/jake-bot/core"
)

// ending is how a turn's CLI ended, as a plugin saw it.
type ending struct {
	// CLI is the display name, e.g. "Claude Code".
	CLI     string
	Result  Result
	WaitErr error
	ReadErr error
	// Finished is true when the stream carried the turn's last event.
	Finished bool
	// Failed is true when that event reported a failure, which the
	// parser has already shown.
	Failed bool
	// Stopped is true when the bot stopped the CLI after its protocol
	// had ended the turn (CLI.ExitGrace): its exit code says nothing.
	Stopped bool
	// Clean, when set, removes noise from stderr before it is shown.
	Clean func(string) string
}

// Err returns the error for a turn that ended as e says: the context's
// when it was cancelled, one for a stream that stopped short or a non-zero
// exit the stream did not explain (with the last lines of stderr), and nil
// for a turn that ended well or whose failure was already reported.
func (e ending) Err(ctx context.Context) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case e.WaitErr != nil && !(e.Stopped && errors.Is(e.WaitErr, context.Canceled)):
		// A CLI the bot stopped that exited 0 on its signal (Node does)
		// is waited for with the stop's cancellation as its error.
		return fmt.Errorf("wait for %s: %w", e.CLI, e.WaitErr)
	case e.ReadErr != nil:
		return fmt.Errorf("read %s output: %w", e.CLI, e.ReadErr)
	case !e.Finished:
		return e.exitError(e.CLI + " ended without a result")
	case e.Result.ExitCode != 0 && !e.Failed && !e.Stopped:
		return e.exitError(e.CLI + " failed")
	}
	return nil
}

// Stderr returns the last lines of stderr, cleaned.
func (e ending) Stderr(lines int) string {
	s := e.Result.Stderr
	if e.Clean != nil {
		s = e.Clean(s)
	}
	return StderrTail(s, lines)
}

func (e ending) exitError(what string) error {
	msg := fmt.Sprintf("%s (exit code %d)", what, e.Result.ExitCode)
	switch e.Result.ExitCode {
	case 137: // 128+SIGKILL, as a shell or container runtime reports a kill
		msg = fmt.Sprintf("%s (exit code 137: killed, perhaps for lack of memory)", what)
	case -1:
		msg = what + " (killed by a signal)"
	}
	if tail := e.Stderr(5); tail != "" {
		msg += ":\n" + tail
	}
	return &core.UserError{Msg: msg}
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// CheckUUID accepts a session id in UUID form, the form all three CLIs
// use, and refuses anything else before it can reach a CLI's arguments.
func CheckUUID(id, what string) error {
	if !uuidRE.MatchString(id) {
		return core.Errorf("%q is not a %s (a UUID)", id, what)
	}
	return nil
}

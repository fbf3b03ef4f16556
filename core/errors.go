package core

import (
	"errors"
	"fmt"
)

// UserError carries a message meant for the person in the chat. Errors that
// are not UserErrors are logged with an id and shown as "internal error
// (id …)": their text is for the operator, not the chat.
type UserError struct {
	// Msg is the whole message the user sees, any cause included.
	Msg string
	// Err is the cause, kept for errors.Is and errors.As; it is not
	// repeated by Error.
	Err error
}

func (e *UserError) Error() string { return e.Msg }

func (e *UserError) Unwrap() error { return e.Err }

// Errorf returns a UserError with a formatted message. A %w verb wraps the
// cause as usual; the whole formatted text is what the user sees.
func Errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &UserError{Msg: err.Error(), Err: errors.Unwrap(err)}
}

// IsUserError reports whether err carries a message meant for the user.
func IsUserError(err error) bool {
	var ue *UserError
	return errors.As(err, &ue)
}

// UserMessage returns a UserError's own message, or "internal error" for
// any other error, whose text may hold paths, addresses or worse.
func UserMessage(err error) string {
	var ue *UserError
	if errors.As(err, &ue) {
		return ue.Msg
	}
	return "internal error"
}

// errorText returns what the chat is shown for err: a UserError's message,
// or for any other error only the id it is logged under, so the operator
// can find it.
func errorText(err error, id string) string {
	if IsUserError(err) {
		return UserMessage(err)
	}
	return fmt.Sprintf("internal error (id %s); the bot's log has the details", id)
}

// Reasons a turn's context is cancelled; the user is told which one fired.
var (
	ErrStopped     = errors.New("stopped by /stop")
	ErrTurnTimeout = errors.New("turn timed out")
	ErrIdleTimeout = errors.New("turn produced no output for too long")
	ErrShutdown    = errors.New("the bot is shutting down")
	ErrSentNow     = errors.New("interrupted for a message sent now")
)

package core

import (
	"errors"
	"fmt"
)

// UserError carries a message meant for the person in the chat. Errors that
// are not UserErrors are logged and shown as a short internal error.
type UserError struct {
	Msg string
	Err error
}

func (e *UserError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *UserError) Unwrap() error { return e.Err }

// Errorf returns a UserError with a formatted message. A %w verb wraps the
// cause as usual; the whole formatted text is what the user sees.
func Errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &UserError{Msg: err.Error(), Err: errors.Unwrap(err)}
}

// UserMessage returns the text to show for err: a UserError's own message,
// or a generic one.
func UserMessage(err error) string {
	var ue *UserError
	if errors.As(err, &ue) {
		return ue.Msg
	}
	return "internal error: " + err.Error()
}

package core_test

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

func TestUserMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"plain", core.Errorf("no such plugin %q", "x"), `no such plugin "x"`},
		// The cause is in the message once, not repeated after it.
		{"wrapped cause", core.Errorf("read notes: %w", io.EOF), "read notes: EOF"},
		{"user error wrapped again", fmt.Errorf("start: %w", core.Errorf("not a directory")), "not a directory"},
		// An internal error's text may hold paths or addresses: not for the chat.
		{"internal", errors.New("dial tcp 10.0.0.7:4222: refused"), "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := core.UserMessage(tt.err); got != tt.want {
				t.Errorf("UserMessage(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
	if err := core.Errorf("read notes: %w", io.EOF); !errors.Is(err, io.EOF) || err.Error() != "read notes: EOF" {
		t.Errorf("Errorf with %%w: Error() = %q, errors.Is(EOF) = %v; want the message once and the cause kept", err, errors.Is(err, io.EOF))
	}
}

// libraryLimit stands for a client library's rate-limit error.
type libraryLimit struct{ after time.Duration }

func (e *libraryLimit) Error() string { return "429" }

func TestAPIError(t *testing.T) {
	t.Parallel()
	after := func(e *libraryLimit) time.Duration { return e.after }
	if err := core.APIError("x send", nil, after); err != nil {
		t.Errorf("APIError(nil) = %v", err)
	}
	plain := errors.New("boom")
	if err := core.APIError("x send", plain, after); !errors.Is(err, plain) || err.Error() != "x send: boom" {
		t.Errorf("APIError(boom) = %v", err)
	}
	limited := fmt.Errorf("post: %w", &libraryLimit{3 * time.Second})
	rl, ok := core.AsRateLimit(core.APIError("x send", limited, after))
	if !ok || rl.RetryAfter != 3*time.Second || !errors.Is(rl, limited) {
		t.Errorf("APIError(429) = %v, %v; want a RateLimitError after 3s", rl, ok)
	}
}

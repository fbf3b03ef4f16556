package cliproc

import (
	"encoding/json"
	"io"
	"sync"
)

// jsonLines writes JSON values, one per line, to a CLI that speaks a line
// protocol on its stdin (Claude Code's control protocol, Codex's
// app-server, Gemini's ACP). It is safe for concurrent use: answers come
// from the chat and interrupts from /stop while the turn's own goroutine
// writes too.
type jsonLines struct {
	mu     sync.Mutex
	w      io.WriteCloser
	closed bool
}

// newJSONLines returns a writer to w.
func newJSONLines(w io.WriteCloser) *jsonLines { return &jsonLines{w: w} }

// Send writes v as one line. After Close it returns io.ErrClosedPipe.
func (j *jsonLines) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return io.ErrClosedPipe
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}

// Close sends end of file, once: the CLI exits when its turn is done.
func (j *jsonLines) Close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		j.closed = true
		j.w.Close()
	}
}

// discard is a CLI's stdin that takes everything and goes nowhere: for
// replaying a recorded protocol session, where nobody answers.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

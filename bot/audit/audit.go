// Package audit writes the router's records as JSON lines: one per
// command, turn and refused message, each with a correlation id shared with
// the logs. It writes only the record's fields, so no token or secret can
// reach it; the user's message text is included only when asked for.
package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// Log is a core.Observer that appends records to a writer. It is safe for
// concurrent use.
type Log struct {
	withText bool
	redact   *core.Redactor
	mu       sync.Mutex
	w        io.Writer
	closer   io.Closer
	err      error
}

var _ core.Observer = (*Log)(nil)

// line is one audit record as written.
type line struct {
	Time       string  `json:"time"`
	ID         string  `json:"id"`
	Kind       string  `json:"kind"`
	Platform   string  `json:"platform"`
	User       string  `json:"user,omitempty"`
	Author     string  `json:"author,omitempty"`
	Channel    string  `json:"channel,omitempty"`
	Thread     string  `json:"thread,omitempty"`
	Command    string  `json:"command,omitempty"`
	Plugin     string  `json:"plugin,omitempty"`
	Workdir    string  `json:"workdir,omitempty"`
	SessionID  string  `json:"resume_token,omitempty"`
	DurationMS int64   `json:"duration_ms"`
	Outcome    string  `json:"outcome"`
	CostUSD    float64 `json:"cost_usd,omitempty"`
	Text       *string `json:"text,omitempty"`
}

// New returns a Log writing to w; withText includes message text, and
// redact blanks secrets out of every line (a message may quote a token).
func New(w io.Writer, withText bool, redact *core.Redactor) *Log {
	return &Log{w: w, withText: withText, redact: redact}
}

// Open appends to the file at path, creating it private to the bot's user.
func Open(path string, withText bool, redact *core.Redactor) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	l := New(f, withText, redact)
	l.closer = f
	return l, nil
}

// Record writes one JSON line. A write error is kept for Close to return:
// auditing must not stop the bot.
func (l *Log) Record(r core.Record) {
	ln := line{
		Time: r.Time.UTC().Format(time.RFC3339Nano), ID: r.ID, Kind: string(r.Kind),
		Platform: r.Key.Platform, User: r.Key.User, Channel: r.Key.Channel, Thread: r.Key.Thread,
		Command: r.Command, Plugin: r.Plugin, Workdir: r.Workdir, SessionID: r.SessionID,
		DurationMS: r.Duration.Milliseconds(), Outcome: r.Outcome, CostUSD: r.CostUSD,
	}
	if r.Author != r.Key.User {
		ln.Author = r.Author
	}
	if l.withText {
		ln.Text = &r.Text
	}
	data, err := json.Marshal(ln)
	if err != nil {
		return
	}
	data = append([]byte(l.redact.Redact(string(data))), '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(data); err != nil && l.err == nil {
		l.err = fmt.Errorf("audit log: %w", err)
	}
}

// Delivery is not audited.
func (l *Log) Delivery(string, core.DeliveryOp) {}

// Close closes the file and returns the first write error, if any.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closer != nil {
		if err := l.closer.Close(); err != nil && l.err == nil {
			l.err = err
		}
		l.closer = nil
	}
	return l.err
}

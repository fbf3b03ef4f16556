package platformtest

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
)

// Call is one write a Recorder received.
type Call struct {
	Op   string // "send" or "edit"
	At   time.Time
	Ref  core.MessageRef
	Text string
}

// Recorder is a core.Platform that records every Send and Edit and keeps
// the current text of every message. Its Render is markdown split at
// MaxLen. Set fields before use; it is safe for concurrent use after.
type Recorder struct {
	PlatformName string
	MaxLen       int
	Lim          core.Limits
	Clock        core.Clock
	// Fail, when set, is consulted before each write; a non-nil error is
	// returned instead of writing (e.g. a *core.RateLimitError).
	Fail func(c Call) error
	// FailReact, when set, is consulted before each reaction, as Fail.
	FailReact func(r Reaction) error
	// Sending, when set, is called within each SendFile before it
	// returns: a test holds a send there.
	Sending func(f SentFile)

	mu       sync.Mutex
	calls    []Call
	messages map[string]string
	order    []string
	next     int
	written  chan Call
	inbox    chan core.Message
	notified chan Notification
	files    chan SentFile
	reacted  chan Reaction
}

// Reaction is one React call a Recorder received: the state shown on a
// user's message.
type Reaction struct {
	MessageID string
	State     core.Reaction
}

// SentFile is one SendFile call a Recorder received.
type SentFile struct {
	To      core.Target
	Name    string
	Data    []byte
	Caption string
}

// Notification is one Notify call a Recorder received.
type Notification struct {
	To   core.Target
	User string
	Why  core.NotifyReason
	Text string
}

// NewRecorder returns a Recorder named "fake" with a 2000-rune limit.
func NewRecorder(clock core.Clock, lim core.Limits) *Recorder {
	return &Recorder{PlatformName: "fake", MaxLen: 2000, Lim: lim, Clock: clock,
		messages: map[string]string{}, written: make(chan Call, 1<<16), inbox: make(chan core.Message, 64),
		notified: make(chan Notification, 1<<10), files: make(chan SentFile, 1<<10),
		reacted: make(chan Reaction, 1<<10)}
}

var _ core.Platform = (*Recorder)(nil)

func (r *Recorder) Name() string        { return r.PlatformName }
func (r *Recorder) Limits() core.Limits { return r.Lim }

// Run delivers messages given to Say until ctx is done or Close is called.
func (r *Recorder) Run(ctx context.Context, h core.Handler) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-r.inbox:
			if !ok {
				return nil
			}
			h(ctx, m)
		}
	}
}

// Say queues a message for Run to hand to the router.
func (r *Recorder) Say(m core.Message) { r.inbox <- m }

// Close ends Run once the queued messages are handled.
func (r *Recorder) Close() { close(r.inbox) }

func (r *Recorder) Render(blocks []core.ResponseBlock) []string {
	return formatter.Markdown(blocks, r.MaxLen)
}

func (r *Recorder) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	r.mu.Lock()
	r.next++
	ref := core.MessageRef{Target: to, ID: strconv.Itoa(r.next)}
	r.mu.Unlock()
	return ref, r.write(Call{Op: "send", Ref: ref, Text: text})
}

func (r *Recorder) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	return r.write(Call{Op: "edit", Ref: ref, Text: text})
}

func (r *Recorder) write(c Call) error {
	if r.Clock != nil {
		c.At = r.Clock.Now()
	}
	if r.Fail != nil {
		if err := r.Fail(c); err != nil {
			return err
		}
	}
	r.mu.Lock()
	if _, seen := r.messages[c.Ref.ID]; !seen {
		r.order = append(r.order, c.Ref.ID)
	}
	r.messages[c.Ref.ID] = c.Text
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	r.written <- c
	return nil
}

// Calls returns every successful write so far.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// Written receives every successful write as it happens.
func (r *Recorder) Written() <-chan Call { return r.written }

// Messages returns the current text of every message, in the order they
// were first sent.
func (r *Recorder) Messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.order))
	for i, id := range r.order {
		out[i] = r.messages[id]
	}
	return out
}

// Notify records a notification (core.Notifier), apart from the writes.
func (r *Recorder) Notify(ctx context.Context, to core.Target, user string, why core.NotifyReason, text string) error {
	r.notified <- Notification{To: to, User: user, Why: why, Text: text}
	return nil
}

// Notified delivers every notification, in order.
func (r *Recorder) Notified() <-chan Notification { return r.notified }

// SendFile records a file (core.FileSender), apart from the writes.
func (r *Recorder) SendFile(ctx context.Context, to core.Target, name string, data []byte, caption string) (core.MessageRef, error) {
	f := SentFile{To: to, Name: name, Data: data, Caption: caption}
	if r.Sending != nil {
		r.Sending(f)
	}
	r.files <- f
	return core.MessageRef{Target: to, ID: "file-" + name}, nil
}

// Files delivers every file sent, in order.
func (r *Recorder) Files() <-chan SentFile { return r.files }

// React records a reaction (core.Reacter), apart from the writes, unless
// FailReact refuses it.
func (r *Recorder) React(ctx context.Context, m core.Message, state core.Reaction) error {
	re := Reaction{MessageID: m.ID, State: state}
	if r.FailReact != nil {
		if err := r.FailReact(re); err != nil {
			return err
		}
	}
	r.reacted <- re
	return nil
}

// Reacted delivers every reaction shown, in order.
func (r *Recorder) Reacted() <-chan Reaction { return r.reacted }

package core

import (
	"errors"
	"sync"
)

// Steering is a message added to a running turn: the agent reads it at
// its next step, inside the same turn.
type Steering struct {
	// From is its author's id: the router steers a message only into a
	// turn it may join (Router.permitsOf), and a runner takes it only into
	// a turn of the same author (Turn.Author).
	From   string
	Prompt string
	// Images are absolute paths of images sent with it, as Turn.Images.
	Images []string
}

// Inbox takes messages into a running turn. The router sends them; a
// plugin whose CLI can take a message mid-turn opens it once the CLI has
// the turn's own message, and closes it when the turn's end is in sight.
// The zero value is closed; it is safe for concurrent use.
type Inbox struct {
	mu     sync.Mutex
	take   func(Steering) error
	closed bool
	watch  func(taking bool)
}

// ErrNotTaken says a running turn cannot take a message: its CLI has no
// way to, or the turn is ending.
var ErrNotTaken = errors.New("the running turn cannot take a message")

// Open makes take receive the messages sent to the turn, until Close. A
// closed inbox stays closed. take returns nil only if the turn will read
// the message; it orders itself against the turn's end, which the plugin
// alone sees.
func (b *Inbox) Open(take func(Steering) error) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.take = take
		if b.watch != nil {
			b.watch(true)
		}
	}
}

// Watch has f told, in order, each time the inbox opens and when it
// closes: a runner tells its gateway, whose own inbox for the turn then
// takes messages. f must not block; call Watch before the turn starts.
func (b *Inbox) Watch(f func(taking bool)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.watch = f
}

// Close stops the inbox taking messages.
func (b *Inbox) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.watch != nil && b.take != nil {
		b.watch(false)
	}
	b.closed, b.take = true, nil
}

// Send gives s to the running turn. It returns nil only if the turn took
// it; ErrNotTaken (or the plugin's error) if it did not.
func (b *Inbox) Send(s Steering) error {
	if b == nil {
		return ErrNotTaken
	}
	b.mu.Lock()
	take := b.take
	b.mu.Unlock()
	if take == nil {
		return ErrNotTaken
	}
	return take(s)
}

// Taking reports whether the inbox takes messages now.
func (b *Inbox) Taking() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.take != nil
}

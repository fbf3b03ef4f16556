package core

import (
	"context"
	"slices"
	"sync"
)

// Holds makes messages wait for work under way that they depend on: the
// start of a conversation in a thread an adapter is opening, which a quick
// first message in the thread could otherwise overtake, find no
// conversation, and be lost. An adapter begins the work, has it hold
// places (a thread; or, before the thread is known, its parent channel,
// under a name of its own), and ends it once the router has handled it; a
// message asks what holds its place and waits for that. The zero value is
// ready to use; it is safe for concurrent use.
type Holds struct {
	mu     sync.Mutex
	places map[string][]chan struct{}
}

// Begin starts a piece of work: hold makes the messages at a place wait
// for it, end ends it, releasing them.
func (h *Holds) Begin() (hold func(place string), end func()) {
	done := make(chan struct{})
	var held []string
	hold = func(place string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.places == nil {
			h.places = make(map[string][]chan struct{})
		}
		if !slices.Contains(h.places[place], done) {
			h.places[place] = append(h.places[place], done)
			held = append(held, place)
		}
	}
	var once sync.Once
	end = func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			close(done)
			for _, place := range held {
				ws := slices.DeleteFunc(h.places[place], func(c chan struct{}) bool { return c == done })
				if len(ws) == 0 {
					delete(h.places, place)
				} else {
					h.places[place] = ws
				}
			}
		})
	}
	return hold, end
}

// Of returns the work the messages at place wait for now.
func (h *Holds) Of(place string) Held {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.places[place])
}

// Held is work a message waits for.
type Held []chan struct{}

// Wait waits until the work has ended, and reports false if ctx ended
// first.
func (w Held) Wait(ctx context.Context) bool {
	for _, done := range w {
		select {
		case <-done:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

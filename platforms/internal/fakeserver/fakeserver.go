// Package fakeserver holds what the fake platform servers
// (discordtest, slacktest, telegramtest) share: how a test waits for a
// fake to change, how long it may wait, and how a fake answers JSON.
package fakeserver

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// WaitLimit bounds every wait on a fake: a test that waits longer has
// failed.
const WaitLimit = 20 * time.Second

// Signal tells whoever waits that a fake changed (a call recorded, an
// event sent): a channel closed and replaced at every change, so tests
// wait on it instead of sleeping. The zero value is ready to use; it is
// safe for concurrent use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// Next returns a channel closed at the next change.
func (s *Signal) Next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Notify wakes everyone waiting.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
	}
	s.ch = make(chan struct{})
}

// WaitFor re-checks cond after every change until it holds; it reports
// false when WaitLimit passed first. cond may call the fake's methods.
func (s *Signal) WaitFor(cond func() bool) bool {
	deadline := time.NewTimer(WaitLimit)
	defer deadline.Stop()
	for {
		ch := s.Next()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// Hold holds a fake's calls until Release, so a test can make the
// platform slow at one point and see what the bot does meanwhile. It is
// safe for concurrent use.
type Hold struct {
	arrived, release  chan struct{}
	once, releaseOnce sync.Once
}

// NewHold returns a Hold that holds every call it is asked to Wait for.
func NewHold() *Hold {
	return &Hold{arrived: make(chan struct{}), release: make(chan struct{})}
}

// Arrived is closed when the first held call arrives.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Release lets held calls, and later ones, through.
func (h *Hold) Release() { h.releaseOnce.Do(func() { close(h.release) }) }

// Wait holds one call until Release.
func (h *Hold) Wait() {
	h.once.Do(func() { close(h.arrived) })
	<-h.release
}

// Keep returns the elements of list for which f holds, in order.
func Keep[T any](list []T, f func(T) bool) []T {
	var out []T
	for _, x := range list {
		if f(x) {
			out = append(out, x)
		}
	}
	return out
}

// WriteJSON answers v as a JSON body.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

// Stall answers nothing for d (or until the client gives up), then closes
// the connection: a request that timed out, as a client sees one when the
// platform or the network between is stuck. The fake must not have acted
// on the request, so that the client may safely send it again.
func Stall(w http.ResponseWriter, r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	// HTTP/2 cannot be hijacked: failing the stream is the nearest.
	panic(http.ErrAbortHandler)
}

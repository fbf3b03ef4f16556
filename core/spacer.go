package core

import (
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core/recent"
)

// Spacer lets a thing happen at most once per key in any window of a
// given length: a hint that anyone may trigger must not become a flood.
// It remembers the last n keys. It is safe for concurrent use.
type Spacer struct {
	mu     sync.Mutex
	last   *recent.Map[string, time.Time]
	window time.Duration
	now    func() time.Time
}

// NewSpacer returns a Spacer of window for n keys, on now (nil: the
// system's clock).
func NewSpacer(n int, window time.Duration, now func() time.Time) *Spacer {
	if now == nil {
		now = time.Now
	}
	return &Spacer{last: recent.New[string, time.Time](n), window: window, now: now}
}

// Due reports whether key may happen now, without recording that it does.
func (s *Spacer) Due(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.due(key)
}

// Take records that key happens now if it may, and reports whether it may.
func (s *Spacer) Take(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.due(key) {
		return false
	}
	s.last.Set(key, s.now())
	return true
}

func (s *Spacer) due(key string) bool {
	at, ok := s.last.Get(key)
	return !ok || s.now().Sub(at) >= s.window
}

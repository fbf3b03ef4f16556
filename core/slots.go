package core

import (
	"context"
	"sync"
)

// turnSlots bounds how many turns run at once, in the whole bot and per
// user. A turn that finds no slot waits in line; the line is served in
// order, except that a turn whose user is at their own limit lets the
// ones behind it pass. It is safe for concurrent use.
type turnSlots struct {
	max, perUser int // zero: no limit

	mu      sync.Mutex
	running int
	byUser  map[string]int
	line    []*slotWaiter
}

type slotWaiter struct {
	user  string
	ready chan struct{}
}

func newTurnSlots(max, perUser int) *turnSlots {
	return &turnSlots{max: max, perUser: perUser, byUser: make(map[string]int)}
}

// acquire takes a slot for user, waiting in line while there is none.
// waiting is called once, with the turn's place in line (1 is next), when
// it has to wait. It returns ctx's error if ctx ends first, holding no
// slot then.
func (s *turnSlots) acquire(ctx context.Context, user string, waiting func(place int)) error {
	s.mu.Lock()
	// Every turn left in line is one that may not start: when this one
	// may, those ahead of it are all held by their users' own limits.
	if s.free(user) {
		s.take(user)
		s.mu.Unlock()
		return nil
	}
	w := &slotWaiter{user: user, ready: make(chan struct{})}
	s.line = append(s.line, w)
	place := len(s.line)
	s.mu.Unlock()
	waiting(place)
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-w.ready:
			// Granted meanwhile: hand the slot on.
			s.releaseLocked(user)
		default:
			s.remove(w)
		}
		return context.Cause(ctx)
	}
}

// release returns user's slot and lets the next turns in line start.
func (s *turnSlots) release(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(user)
}

func (s *turnSlots) releaseLocked(user string) {
	s.running--
	if s.byUser[user]--; s.byUser[user] <= 0 {
		delete(s.byUser, user)
	}
	s.grantLocked()
}

// grantLocked starts every waiting turn that may start, in line order.
func (s *turnSlots) grantLocked() {
	for i := 0; i < len(s.line); {
		w := s.line[i]
		if s.max > 0 && s.running >= s.max {
			return
		}
		if !s.free(w.user) {
			i++
			continue
		}
		s.take(w.user)
		s.line = append(s.line[:i], s.line[i+1:]...)
		close(w.ready)
	}
}

func (s *turnSlots) free(user string) bool {
	return (s.max <= 0 || s.running < s.max) && (s.perUser <= 0 || s.byUser[user] < s.perUser)
}

func (s *turnSlots) take(user string) {
	s.running++
	s.byUser[user]++
}

func (s *turnSlots) remove(w *slotWaiter) {
	for i, x := range s.line {
		if x == w {
			s.line = append(s.line[:i], s.line[i+1:]...)
			return
		}
	}
}

// waitingCount returns how many turns wait for a slot.
func (s *turnSlots) waitingCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.line)
}

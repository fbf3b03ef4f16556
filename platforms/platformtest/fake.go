package platformtest

import (
	"sync"
	"time"
)

// waitLimit bounds every wait on a fake: a test that waits longer has
// failed.
const waitLimit = 20 * time.Second

// signal tells whoever waits that a fake changed (a call recorded, an
// event sent): a channel closed and replaced at every change, so tests
// wait on it instead of sleeping. The zero value is ready to use; it is
// safe for concurrent use.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// next returns a channel closed at the next change.
func (s *signal) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// notify wakes everyone waiting.
func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
	}
	s.ch = make(chan struct{})
}

// waitFor re-checks cond after every change until it holds; it reports
// false when waitLimit passed first. cond may call the fake's methods.
func (s *signal) waitFor(cond func() bool) bool {
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		ch := s.next()
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

// keep returns the elements of list for which f holds, in order.
func keep[T any](list []T, f func(T) bool) []T {
	var out []T
	for _, x := range list {
		if f(x) {
			out = append(out, x)
		}
	}
	return out
}

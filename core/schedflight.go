package core

import "sync"

// schedFlight knows which scheduled messages are being handled, from
// their firing until their turn is delivered: a user's refused turns go
// on one after another, not all at once when their window resets, and a
// repeating schedule does not pile firings up behind one that still runs
// or waits for an answer.
type schedFlight struct {
	// run makes runSchedules one at a time: a message's end arms them
	// again, possibly while they run.
	run sync.Mutex
	mu  sync.Mutex
	// firing are the schedules whose message is being handled; users
	// the authors ("platform/user") one of whose continuations is.
	firing map[int]bool
	users  map[string]bool
	// skipped are the repeating schedules told that a firing was skipped,
	// until one runs again: the chat hears it once.
	skipped map[int]bool
}

func newSchedFlight() *schedFlight {
	return &schedFlight{firing: map[int]bool{}, users: map[string]bool{}, skipped: map[int]bool{}}
}

func author(s Schedule) string { return s.Key.Platform + "/" + s.From }

// holds reports whether continuation s waits for another of its author's
// to finish first.
func (f *schedFlight) holds(s Schedule) bool {
	if s.Limit == "" {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.users[author(s)]
}

// busy reports whether s's previous firing is still being handled; the
// first time it is since s last ran, first is set too.
func (f *schedFlight) busy(s Schedule) (busy, first bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.firing[s.ID] {
		return false, false
	}
	first = !f.skipped[s.ID]
	f.skipped[s.ID] = true
	return true, first
}

// start marks s as being handled and returns what ends that, which then
// calls after (arming the schedules it held back) for a continuation.
func (f *schedFlight) start(s Schedule, after func()) func() {
	f.mu.Lock()
	f.firing[s.ID] = true
	delete(f.skipped, s.ID)
	if s.Limit != "" {
		f.users[author(s)] = true
	}
	f.mu.Unlock()
	return func() {
		// Only a continuation holds others back (holds): only its end
		// has schedules to arm again. Arming for nothing would race a
		// test's clock for no gain.
		continuation := s.Limit != ""
		f.mu.Lock()
		delete(f.firing, s.ID)
		if continuation {
			delete(f.users, author(s))
		}
		f.mu.Unlock()
		if continuation {
			after()
		}
	}
}

package discord

import "sync"

// recent is a bounded set of ids: it remembers the last n added, so a
// gateway event delivered twice is recognised. It is safe for concurrent
// use.
type recent struct {
	mu   sync.Mutex
	set  map[string]struct{}
	ring []string
	next int
}

func newRecent(n int) *recent {
	return &recent{set: make(map[string]struct{}, n), ring: make([]string, n)}
}

// add records id and reports whether it is new.
func (r *recent) add(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.set[id]; dup {
		return false
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.set, old)
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % len(r.ring)
	r.set[id] = struct{}{}
	return true
}

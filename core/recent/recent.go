// Package recent is a bounded map that forgets the oldest keys, for what
// the bot remembers for a while in a process that runs for months.
package recent

import "sync"

// Map is a bounded map that remembers the last n keys added: ids of
// events a service may deliver twice, users already told something once,
// threads the bot takes part in. The oldest key goes when a new one comes
// in, so memory stays bounded however long the bot runs. It is safe for
// concurrent use.
type Map[K comparable, V any] struct {
	mu   sync.Mutex
	vals map[K]recentValue[V]
	// order is a ring of keys in insertion order. A deleted key's slot
	// stays until it comes round; a key holds only the slot it has now,
	// so a stale one evicts nothing.
	order []K
	next  int
}

// recentValue is a value and the ring slot of its key.
type recentValue[V any] struct {
	v    V
	slot int
}

// New returns a Map that keeps n keys.
func New[K comparable, V any](n int) *Map[K, V] {
	return &Map[K, V]{vals: make(map[K]recentValue[V], n), order: make([]K, 0, max(n, 1))}
}

// Add stores v under k unless k is present, and reports whether it did:
// false means k was seen before.
func (r *Map[K, V]) Add(k K, v V) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.vals[k]; ok {
		return false
	}
	r.insert(k, v)
	return true
}

// Set stores v under k, replacing any value.
func (r *Map[K, V]) Set(k K, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.vals[k]; ok {
		r.vals[k] = recentValue[V]{v, old.slot}
		return
	}
	r.insert(k, v)
}

// Get returns the value under k.
func (r *Map[K, V]) Get(k K) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.vals[k]
	return e.v, ok
}

// Delete forgets k.
func (r *Map[K, V]) Delete(k K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.vals, k)
}

// Len returns how many keys are kept.
func (r *Map[K, V]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.vals)
}

func (r *Map[K, V]) insert(k K, v V) {
	slot := len(r.order)
	if slot < cap(r.order) {
		r.order = append(r.order, k)
	} else {
		slot = r.next
		if old := r.order[slot]; r.vals[old].slot == slot {
			delete(r.vals, old) // not a key deleted, or added again since
		}
		r.order[slot] = k
		r.next = (r.next + 1) % len(r.order)
	}
	r.vals[k] = recentValue[V]{v, slot}
}

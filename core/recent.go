package core

import "sync"

// Recent is a bounded map that remembers the last n keys added: ids of
// events a service may deliver twice, users already told something once,
// threads the bot takes part in. The oldest key goes when a new one comes
// in, so memory stays bounded however long the bot runs. It is safe for
// concurrent use.
type Recent[K comparable, V any] struct {
	mu    sync.Mutex
	vals  map[K]V
	order []K // ring of keys in insertion order
	next  int
}

// NewRecent returns a Recent that keeps n keys.
func NewRecent[K comparable, V any](n int) *Recent[K, V] {
	return &Recent[K, V]{vals: make(map[K]V, n), order: make([]K, 0, max(n, 1))}
}

// Add stores v under k unless k is present, and reports whether it did:
// false means k was seen before.
func (r *Recent[K, V]) Add(k K, v V) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.vals[k]; ok {
		return false
	}
	r.insert(k, v)
	return true
}

// Set stores v under k, replacing any value.
func (r *Recent[K, V]) Set(k K, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.vals[k]; ok {
		r.vals[k] = v
		return
	}
	r.insert(k, v)
}

// Get returns the value under k.
func (r *Recent[K, V]) Get(k K) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.vals[k]
	return v, ok
}

// Delete forgets k.
func (r *Recent[K, V]) Delete(k K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// A key added again may then be forgotten early, when its old slot
	// comes round: the bound matters more than the exact count.
	delete(r.vals, k)
}

// Len returns how many keys are kept.
func (r *Recent[K, V]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.vals)
}

func (r *Recent[K, V]) insert(k K, v V) {
	if len(r.order) < cap(r.order) {
		r.order = append(r.order, k)
	} else {
		delete(r.vals, r.order[r.next])
		r.order[r.next] = k
		r.next = (r.next + 1) % len(r.order)
	}
	r.vals[k] = v
}

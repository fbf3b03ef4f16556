package slack

import "sync"

// recent is a bounded map that forgets its oldest keys first: enough to
// drop redeliveries (Slack retries within minutes) and remember recent
// threads without growing for ever. It is safe for concurrent use.
type recent[V any] struct {
	mu    sync.Mutex
	vals  map[string]V
	order []string // ring of keys in insertion order
	next  int
}

func newRecent[V any](size int) *recent[V] {
	return &recent[V]{vals: make(map[string]V, size), order: make([]string, 0, size)}
}

// add stores v under k unless k is present, and reports whether it was
// added.
func (r *recent[V]) add(k string, v V) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.vals[k]; ok {
		return false
	}
	r.insert(k, v)
	return true
}

// set stores v under k, replacing any value.
func (r *recent[V]) set(k string, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.vals[k]; ok {
		r.vals[k] = v
		return
	}
	r.insert(k, v)
}

func (r *recent[V]) get(k string) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.vals[k]
	return v, ok
}

func (r *recent[V]) insert(k string, v V) {
	if len(r.order) < cap(r.order) {
		r.order = append(r.order, k)
	} else {
		delete(r.vals, r.order[r.next])
		r.order[r.next] = k
		r.next = (r.next + 1) % len(r.order)
	}
	r.vals[k] = v
}

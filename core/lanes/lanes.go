// Package lanes runs work in order per key and in parallel across keys.
package lanes

import "sync"

// PerKey runs functions one at a time per key, in the order they were
// given, and functions of different keys in parallel. Adapters use it to
// hand a conversation's messages to the router in order without one slow
// chat holding up the others. A key's goroutine exists only while it has
// work. The zero value is ready to use; it is safe for concurrent use.
type PerKey[K comparable] struct {
	mu     sync.Mutex
	q      map[K][]func()
	wg     sync.WaitGroup
	closed bool
}

// Do queues f behind the functions already queued for k. It reports false,
// and drops f, once Close has been called: a platform event that arrives
// while the adapter shuts down has nowhere to go.
func (l *PerKey[K]) Do(k K, f func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if l.q == nil {
		l.q = make(map[K][]func())
	}
	q, busy := l.q[k]
	l.q[k] = append(q, f)
	if !busy {
		// Under mu, and never after closed is set: a WaitGroup's Add must
		// not race its Wait, and events keep coming while Close waits.
		l.wg.Add(1)
		go l.work(k)
	}
	return true
}

func (l *PerKey[K]) work(k K) {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		q := l.q[k]
		if len(q) == 0 {
			delete(l.q, k)
			l.mu.Unlock()
			return
		}
		f := q[0]
		q[0] = nil
		l.q[k] = q[1:]
		l.mu.Unlock()
		f()
	}
}

// Close refuses new functions and blocks until every queued one has run.
// It is safe to call more than once and while Do is being called.
func (l *PerKey[K]) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.wg.Wait()
}

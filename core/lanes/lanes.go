// Package lanes runs work in order per key and in parallel across keys.
package lanes

import "sync"

// PerKey runs functions one at a time per key, in the order they were
// given, and functions of different keys in parallel. Adapters use it to
// hand a conversation's messages to the router in order without one slow
// chat holding up the others. A key's goroutine exists only while it has
// work. The zero value is ready to use; it is safe for concurrent use.
type PerKey[K comparable] struct {
	mu sync.Mutex
	q  map[K][]func()
	wg sync.WaitGroup
}

// Do queues f behind the functions already queued for k.
func (l *PerKey[K]) Do(k K, f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil {
		l.q = make(map[K][]func())
	}
	q, busy := l.q[k]
	l.q[k] = append(q, f)
	if !busy {
		l.wg.Add(1)
		go l.work(k)
	}
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

// Wait blocks until every queued function has run.
func (l *PerKey[K]) Wait() { l.wg.Wait() }

package discord

import (
	"sync"

	"github.com/jake-bot/jake-bot/core"
)

// lanes runs jobs one at a time per conversation key, in the order they
// were added, and jobs of different keys in parallel. A lane's goroutine
// exists only while it has work. The zero value is ready to use.
type lanes struct {
	mu sync.Mutex
	q  map[core.ConversationKey][]func()
	wg sync.WaitGroup
}

func (l *lanes) run(k core.ConversationKey, job func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil {
		l.q = make(map[core.ConversationKey][]func())
	}
	q, busy := l.q[k]
	l.q[k] = append(q, job)
	if !busy {
		l.wg.Add(1)
		go l.drain(k)
	}
}

func (l *lanes) drain(k core.ConversationKey) {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		q := l.q[k]
		if len(q) == 0 {
			delete(l.q, k)
			l.mu.Unlock()
			return
		}
		job := q[0]
		q[0] = nil
		l.q[k] = q[1:]
		l.mu.Unlock()
		job()
	}
}

// wait blocks until every lane is empty.
func (l *lanes) wait() { l.wg.Wait() }

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

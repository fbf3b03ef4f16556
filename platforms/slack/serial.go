package slack

import "sync"

// serial runs functions one at a time per key, in the order given, with a
// goroutine per busy key: messages of one thread stay in order, and a
// thread waiting on Slack holds up no other. It is safe for concurrent use.
type serial struct {
	mu     sync.Mutex
	queues map[string][]func()
	wg     sync.WaitGroup
}

func newSerial() *serial { return &serial{queues: make(map[string][]func())} }

// do queues f behind the functions already queued for key.
func (s *serial) do(key string, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, busy := s.queues[key]
	s.queues[key] = append(q, f)
	if !busy {
		s.wg.Add(1)
		go s.run(key)
	}
}

func (s *serial) run(key string) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		q := s.queues[key]
		if len(q) == 0 {
			delete(s.queues, key)
			s.mu.Unlock()
			return
		}
		f := q[0]
		s.queues[key] = q[1:]
		s.mu.Unlock()
		f()
	}
}

// wait blocks until every queued function has run.
func (s *serial) wait() { s.wg.Wait() }

package core

import (
	"sync"
	"sync/atomic"
	"time"
)

// idleWatch calls fire once no activity has been seen for idle. It keeps
// one timer per turn and re-arms it only when it fires, so that touching
// it for each of a million events costs a clock read, not a timer.
type idleWatch struct {
	clock Clock
	idle  time.Duration
	fire  func()
	last  atomic.Int64 // clock time of the last activity, in Unix nanoseconds
	// paused counts the questions waiting for the chat: a CLI waiting for
	// a person's answer is not idle.
	paused atomic.Int32

	mu      sync.Mutex
	timer   Timer
	stopped bool
}

// newIdleWatch starts watching; idle <= 0 watches nothing.
func newIdleWatch(clock Clock, idle time.Duration, fire func()) *idleWatch {
	w := &idleWatch{clock: clock, idle: idle, fire: fire}
	if idle <= 0 {
		w.stopped = true
		return w
	}
	w.touch()
	w.timer = clock.AfterFunc(idle, w.check)
	return w
}

// touch records activity now.
func (w *idleWatch) touch() { w.last.Store(w.clock.Now().UnixNano()) }

// pause holds the watch until the matching resume.
func (w *idleWatch) pause() { w.paused.Add(1) }

// resume undoes one pause; the idle time counts from now.
func (w *idleWatch) resume() {
	w.touch()
	w.paused.Add(-1)
}

func (w *idleWatch) check() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	quiet := w.clock.Now().Sub(time.Unix(0, w.last.Load()))
	if w.paused.Load() > 0 {
		quiet = 0
	}
	if quiet < w.idle {
		w.timer = w.clock.AfterFunc(w.idle-quiet, w.check)
		w.mu.Unlock()
		return
	}
	w.stopped = true
	w.mu.Unlock()
	w.fire()
}

// stop ends the watch; fire is not called afterwards.
func (w *idleWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

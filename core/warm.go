package core

import (
	"sync"
	"time"
)

// warmCLI is a warm turn waiting in the pool, with what it was started
// for: it serves only a turn exactly like it.
type warmCLI struct {
	w      WarmTurn
	plugin string
	turn   Turn
	// tools is the bot's MCP server opened for this CLI (Turn.Tools).
	tools *toolLease
	used  time.Time
	timer Timer
}

// warmPool keeps at most max warm CLIs, one per conversation, each for
// ttl at most (on clock); when pressure says memory is short, a warm CLI
// coming in halves them.
type warmPool struct {
	ttl      time.Duration
	max      int
	clock    Clock
	pressure func() bool

	mu    sync.Mutex
	byKey map[ConversationKey]*warmCLI
	// starting holds the warm-up under way for each conversation. take and
	// drop forget it: a warm-up overtaken by a turn or a change (/stop,
	// /conversation end, a new model) is closed when it arrives, not
	// pooled for a conversation that moved on or no longer exists.
	starting map[ConversationKey]uint64
	lastID   uint64
	// shut is set by closeAll: a CLI warmed after that is closed at once.
	shut bool
	// wg counts warm CLIs being started or closed, so shutdown can wait.
	wg sync.WaitGroup
}

func newWarmPool(ttl time.Duration, max int, clock Clock, pressure func() bool) *warmPool {
	if pressure == nil {
		pressure = func() bool { return false }
	}
	return &warmPool{ttl: ttl, max: max, clock: clock, pressure: pressure, byKey: make(map[ConversationKey]*warmCLI),
		starting: make(map[ConversationKey]uint64)}
}

func (wp *warmPool) enabled() bool { return wp.ttl > 0 && wp.max > 0 }

// take removes and returns key's warm CLI, or nil.
func (wp *warmPool) take(key ConversationKey) *warmCLI {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	delete(wp.starting, key)
	c := wp.byKey[key]
	if c != nil {
		delete(wp.byKey, key)
		c.timer.Stop()
	}
	return c
}

// drop closes key's warm CLI, if any.
func (wp *warmPool) drop(key ConversationKey) {
	if c := wp.take(key); c != nil {
		wp.close(c)
	}
}

// close stops c in the background; Wait waits for it.
func (wp *warmPool) close(c *warmCLI) {
	wp.wg.Add(1)
	go func() {
		defer wp.wg.Done()
		c.w.Close()
		c.tools.end()
	}()
}

// begin records a warm-up starting for key, replacing any under way, and
// returns its id for put.
func (wp *warmPool) begin(key ConversationKey) uint64 {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	wp.lastID++
	wp.starting[key] = wp.lastID
	return wp.lastID
}

// put adds c, started by warm-up id, for key, closing the CLI it replaces
// and, beyond max or while memory is short, the least recently used ones
// (c last). A warm-up that take or drop forgot meanwhile, or one after
// closeAll, is closed instead.
func (wp *warmPool) put(key ConversationKey, id uint64, c *warmCLI) {
	wp.mu.Lock()
	if wp.shut || wp.starting[key] != id {
		wp.mu.Unlock()
		wp.close(c)
		return
	}
	delete(wp.starting, key)
	var evicted []*warmCLI
	if old := wp.byKey[key]; old != nil {
		old.timer.Stop()
		evicted = append(evicted, old)
	}
	wp.byKey[key] = c
	for len(wp.byKey) > wp.max {
		evicted = append(evicted, wp.evictOldest())
	}
	// A warm CLI holds 150–370 MB: when memory is short, half of them
	// go, the oldest first, this one last (alone, it goes).
	if wp.pressure() {
		for keep := len(wp.byKey) / 2; len(wp.byKey) > keep; {
			evicted = append(evicted, wp.evictOldest())
		}
	}
	if wp.byKey[key] != c {
		wp.mu.Unlock()
		for _, e := range evicted {
			wp.close(e)
		}
		return
	}
	c.timer = wp.clock.AfterFunc(wp.ttl, func() {
		wp.mu.Lock()
		if wp.byKey[key] == c {
			delete(wp.byKey, key)
		} else {
			c = nil
		}
		wp.mu.Unlock()
		if c != nil {
			wp.close(c)
		}
	})
	wp.mu.Unlock()
	for _, e := range evicted {
		wp.close(e)
	}
}

// evictOldest removes the least recently used warm CLI, which the caller
// closes. wp.mu is held and the pool is not empty.
func (wp *warmPool) evictOldest() *warmCLI {
	var oldestKey ConversationKey
	var oldest *warmCLI
	for k, e := range wp.byKey {
		if oldest == nil || e.used.Before(oldest.used) {
			oldestKey, oldest = k, e
		}
	}
	delete(wp.byKey, oldestKey)
	if oldest.timer != nil { // nil for the one being put
		oldest.timer.Stop()
	}
	return oldest
}

// closeAll closes every warm CLI and waits until all are gone.
func (wp *warmPool) closeAll() {
	wp.mu.Lock()
	all := wp.byKey
	wp.byKey = make(map[ConversationKey]*warmCLI)
	clear(wp.starting)
	wp.shut = true
	wp.mu.Unlock()
	for _, c := range all {
		c.timer.Stop()
		wp.close(c)
	}
	// Warm-ups still starting put their CLI after shut: it is closed, and
	// counted, before this returns.
	wp.wg.Wait()
}

// has reports whether key's next turn has a warm CLI.
func (wp *warmPool) has(key ConversationKey) bool {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	return wp.byKey[key] != nil
}

// warmProcess is a warm CLI that is a process on this machine
// (cliproc.Conn): its memory is reported.
type warmProcess interface{ PID() int }

// pids returns the process ids of the warm CLIs that are processes here.
func (wp *warmPool) pids() []int {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	var pids []int
	for _, c := range wp.byKey {
		if p, ok := c.w.(warmProcess); ok {
			pids = append(pids, p.PID())
		}
	}
	return pids
}

// count returns how many warm CLIs wait.
func (wp *warmPool) count() int {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	return len(wp.byKey)
}

// warmReadier is a warm CLI that knows when it has started
// (cliproc.Conn): its handshake is done, it waits for nothing but the
// message.
type warmReadier interface{ Ready() <-chan struct{} }

// ready returns how many warm CLIs say they have started.
func (wp *warmPool) ready() int {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	n := 0
	for _, c := range wp.byKey {
		if r, ok := c.w.(warmReadier); ok && closedChan(r.Ready()) {
			n++
		}
	}
	return n
}

func closedChan(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

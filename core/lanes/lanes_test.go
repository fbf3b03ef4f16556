package lanes_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/jake-bot/jake-bot/core/lanes"
)

func TestLanesKeepOrderPerKeyAndRunKeysInParallel(t *testing.T) {
	t.Parallel()
	var l lanes.PerKey[string]
	var mu sync.Mutex
	got := map[string][]int{}
	// Lane "slow" blocks until lane "fast" has run: they must not share a
	// goroutine.
	fastDone := make(chan struct{})
	l.Do("slow", func() { <-fastDone })
	for i := range 100 {
		for _, k := range []string{"slow", "fast"} {
			l.Do(k, func() {
				mu.Lock()
				got[k] = append(got[k], i)
				mu.Unlock()
			})
		}
	}
	l.Do("fast", func() { close(fastDone) })
	l.Close()
	want := make([]int, 100)
	for i := range want {
		want[i] = i
	}
	for _, k := range []string{"slow", "fast"} {
		if !slices.Equal(got[k], want) {
			t.Errorf("lane %s ran %v, want 0..99 in order", k, fmt.Sprint(got[k][:min(5, len(got[k]))]))
		}
	}
}

// Platform events keep arriving while an adapter shuts down: Close must
// not race them (the race detector flags a WaitGroup's Add beside its
// Wait), must run everything it accepted, and must refuse the rest.
func TestCloseWhileEventsArrive(t *testing.T) {
	t.Parallel()
	var l lanes.PerKey[int]
	var mu sync.Mutex
	accepted, ran := 0, 0
	closed := false
	var senders sync.WaitGroup
	start := make(chan struct{})
	for s := range 8 {
		senders.Add(1)
		go func() {
			defer senders.Done()
			<-start
			for i := range 200 {
				ok := l.Do(s*1000+i%3, func() {
					mu.Lock()
					if closed {
						t.Error("a function ran after Close returned")
					}
					ran++
					mu.Unlock()
				})
				if ok {
					mu.Lock()
					accepted++
					mu.Unlock()
				}
			}
		}()
	}
	close(start)
	l.Close()
	mu.Lock()
	closed = true
	mu.Unlock()
	senders.Wait()
	if ran != accepted {
		t.Errorf("Close returned with %d of %d accepted functions run", ran, accepted)
	}
	if l.Do(0, func() {}) {
		t.Error("Do accepted a function after Close")
	}
	l.Close()
}

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
	l.Wait()
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

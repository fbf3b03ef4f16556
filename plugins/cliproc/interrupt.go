package cliproc

import (
	"context"
	"sync"
	"time"
)

// InterruptGrace is how long an interrupted CLI has to end its turn
// before it is killed.
const InterruptGrace = 3 * time.Second

// interruptOn stops a turn gently when ctx ends: it calls interrupt (a
// CLI's own protocol message, after which the CLI ends the turn and keeps
// it in its session) and calls kill if that fails or the CLI has not
// ended grace later. Run the CLI under a context that ctx's end does not
// cancel, and call the returned stop once it has ended.
func interruptOn(ctx context.Context, interrupt func() error, kill func(), grace time.Duration) (stop func()) {
	var mu sync.Mutex
	var timer *time.Timer
	ended := false
	stopWatch := context.AfterFunc(ctx, func() {
		if err := interrupt(); err != nil {
			kill()
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			timer = time.AfterFunc(grace, kill)
		}
	})
	return func() {
		stopWatch()
		mu.Lock()
		defer mu.Unlock()
		ended = true
		if timer != nil {
			timer.Stop()
		}
	}
}

package core

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// WindDown shuts the router down gently: no new turn starts, every chat with
// a running turn is told that the bot is restarting and how to continue,
// messages still queued are answered instead of run, and running turns get
// grace (on the router's clock) to finish before they are cancelled with
// ErrShutdown. WindDown returns once every turn has ended and its final reply
// is delivered.
func (r *Router) WindDown(grace time.Duration) {
	turns := r.turns.windDown()
	var wg sync.WaitGroup
	for _, t := range turns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.reply(t.a, t.target, restartNotice(grace, t.plugin, t.sessionID, len(t.dropped)))
		}()
	}
	wg.Wait()
	for _, t := range turns {
		finishAll(t.dropped)
	}
	r.logger.Info("windingDown", "running_turns", len(turns), "grace", grace)

	done := make(chan struct{})
	go func() {
		r.turns.wait()
		close(done)
	}()
	expired := make(chan struct{})
	t := r.clock.AfterFunc(grace, func() { close(expired) })
	defer t.Stop()
	select {
	case <-done:
		r.warm.closeAll()
		return
	case <-expired:
	}
	r.cancelAll(ErrShutdown)
	defer r.warm.closeAll()
	// A turn that does not end once cancelled (a plugin that ignores its
	// context) must not keep the bot from exiting.
	select {
	case <-done:
	case <-time.After(r.cfg.StopDeadline):
		r.logger.Error("turns still running after being cancelled; shutting down without them", "deadline", r.cfg.StopDeadline)
	}
}

func restartNotice(grace time.Duration, plugin, sessionID string, dropped int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The bot is restarting. The running turn has %s to finish; if it is cut short, send your message again once the bot is back.", grace)
	if sessionID != "" {
		fmt.Fprintf(&b, " The conversation continues by itself if the bot keeps its state; otherwise /%s resume %s brings it back.", plugin, sessionID)
	}
	if dropped > 0 {
		fmt.Fprintf(&b, " %d queued messages were not run; send them again later.", dropped)
	}
	return b.String()
}

package discordtest

import (
	"time"

	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

// fault answers the next n matching calls with 429.
type fault struct {
	method, pattern string
	retryAfter      time.Duration
	n               int
}

// RateLimit makes the next n calls with method matching pattern fail
// with 429 Too Many Requests and retry_after.
func (d *Server) RateLimit(method, pattern string, retryAfter time.Duration, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faults = append(d.faults, &fault{method, pattern, retryAfter, n})
}

func (d *Server) takeFault(c Call) *fault {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.faults {
		if f.n > 0 && c.Is(f.method, f.pattern) {
			f.n--
			return f
		}
	}
	return nil
}

// Hold holds matching calls until Release, so a test can make Discord
// slow at one point.
type Hold struct {
	*fakeserver.Hold
	method, pattern string
}

// Hold makes calls with method matching pattern wait until the returned
// Hold is released. Released on test cleanup at the latest.
func (d *Server) Hold(method, pattern string) *Hold {
	h := &Hold{Hold: fakeserver.NewHold(), method: method, pattern: pattern}
	d.mu.Lock()
	d.holds = append(d.holds, h)
	d.mu.Unlock()
	d.t.Cleanup(h.Release)
	return h
}

func (d *Server) wait(c Call) {
	d.mu.Lock()
	var hs []*Hold
	for _, h := range d.holds {
		if c.Is(h.method, h.pattern) {
			hs = append(hs, h)
		}
	}
	d.mu.Unlock()
	for _, h := range hs {
		h.Wait()
	}
}

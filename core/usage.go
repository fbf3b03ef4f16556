package core

import (
	"cmp"
	"maps"
	"slices"
	"time"
)

// LimitEvent returns an EventLimit event for w.
func LimitEvent(w UsageWindow) Event { return Event{Kind: EventLimit, Limit: &w} }

// DefaultLimitWarn is the used percent from which a window is warned
// about in a reply's footer (LIMIT_WARN).
const DefaultLimitWarn = 80

// windowKey is a window's place in State.windows: the latest report of
// each, per plugin and runner, so a sparse update (one window) leaves the
// others as they were.
func windowKey(w UsageWindow) [3]string { return [3]string{w.Plugin, w.Runner, w.Window} }

func (c *State) setWindow(w UsageWindow) {
	c.mu.Lock()
	c.windows[windowKey(w)] = w
	c.mu.Unlock()
	c.changed()
}

// Windows returns every usage window as last reported, by plugin, runner
// and window, for /usage and for saving.
func (c *State) Windows() []UsageWindow {
	c.mu.RLock()
	out := slices.Collect(maps.Values(c.windows))
	c.mu.RUnlock()
	slices.SortFunc(out, func(x, y UsageWindow) int {
		return cmp.Or(cmp.Compare(x.Plugin, y.Plugin), cmp.Compare(x.Runner, y.Runner), cmp.Compare(x.Window, y.Window))
	})
	return out
}

// LoadWindows adds saved usage windows, as at start-up.
func (c *State) LoadWindows(windows []UsageWindow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range windows {
		c.windows[windowKey(w)] = w
	}
}

// resetTime is when a window resets, in UTC: the time alone within a
// day, with the date beyond.
func resetTime(now, at time.Time) string {
	at = at.UTC()
	if at.Sub(now) < 24*time.Hour {
		return at.Format("15:04") + " UTC"
	}
	return at.Format("Mon 2 Jan 15:04") + " UTC"
}

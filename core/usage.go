package core

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// UsageWindow is one usage window of a CLI's subscription (Claude's five
// hours, Codex's week) as the CLI last reported it. A plugin emits it in
// an EventLimit with Window, UsedPercent, ResetsAt and Rejected; the
// router fills in Plugin and Runner.
type UsageWindow struct {
	Plugin string `json:"plugin,omitempty"`
	// Runner is the runner the turn ran on; empty for this machine.
	Runner string `json:"runner,omitempty"`
	// Window names it as the chat shows it: "5h", "weekly".
	Window string `json:"window"`
	// UsedPercent is how much of it is used, 0 to 100; -1 when the CLI
	// did not say.
	UsedPercent int       `json:"used_percent"`
	ResetsAt    time.Time `json:"resets_at"`
	// Rejected is set when the window refused a turn.
	Rejected bool `json:"rejected,omitempty"`
}

// LimitEvent returns an EventLimit event for w.
func LimitEvent(w UsageWindow) Event { return Event{Kind: EventLimit, Limit: &w} }

// DefaultLimitWarn is the used percent from which a window is warned
// about in a reply's footer (LIMIT_WARN).
const DefaultLimitWarn = 80

// usageBook says the windows the router's State keeps (State.setWindow),
// so that they are saved with the rest of the state and a restarted or
// standby gateway shows them.
type usageBook struct {
	// plugins name the CLIs; warn is LIMIT_WARN.
	plugins *Registry
	warn    int
	clock   Clock
	state   *State
}

func newUsageBook(plugins *Registry, warn int, clock Clock, state *State) *usageBook {
	if warn <= 0 {
		warn = DefaultLimitWarn
	}
	return &usageBook{plugins: plugins, warn: warn, clock: clock, state: state}
}

func (b *usageBook) set(w UsageWindow) { b.state.setWindow(w) }

func (b *usageBook) all() []UsageWindow { return b.state.Windows() }

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

// windowLine says one window: "Claude 5h window 91 % · resets 18:40 UTC".
func (ub *usageBook) windowLine(w UsageWindow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s window", ub.plugins.name(w.Plugin), w.Window)
	switch {
	case w.Rejected:
		b.WriteString(" used up")
	case w.UsedPercent >= 0:
		fmt.Fprintf(&b, " %d %%", w.UsedPercent)
	}
	if w.Runner != "" {
		fmt.Fprintf(&b, " on %s", w.Runner)
	}
	if !w.ResetsAt.IsZero() {
		b.WriteString(" · resets " + resetTime(ub.clock.Now(), w.ResetsAt))
	}
	return b.String()
}

// windowName is a window's name with its CLI's: "Claude Code 5h".
func (ub *usageBook) windowName(w UsageWindow) string {
	name := ub.plugins.name(w.Plugin)
	if w.Runner != "" {
		return name + " " + w.Window + " (" + w.Runner + ")"
	}
	return name + " " + w.Window
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

// cmdLimits answers /limits.
func cmdLimits(c *call) (string, error) {
	r := c.r
	windows := r.usage.all()
	if len(windows) == 0 {
		return "No CLI has reported a usage window yet. Claude Code reports them when signed in with a subscription, Codex when signed in with ChatGPT; they come with each turn.", nil
	}
	lines := []string{"Usage windows, as the CLIs last reported them:"}
	for _, w := range windows {
		lines = append(lines, "• "+r.usage.windowLine(w))
	}
	return strings.Join(lines, "\n"), nil
}

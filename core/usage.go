package core

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// usageBook keeps the latest report of every window, per plugin and
// runner: a sparse update (one window) leaves the others as they were.
type usageBook struct {
	// plugins name the CLIs; warn is LIMIT_WARN.
	plugins *Registry
	warn    int
	clock   Clock

	mu      sync.Mutex
	windows map[[3]string]UsageWindow
}

func newUsageBook(plugins *Registry, warn int, clock Clock) *usageBook {
	if warn <= 0 {
		warn = DefaultLimitWarn
	}
	return &usageBook{plugins: plugins, warn: warn, clock: clock, windows: map[[3]string]UsageWindow{}}
}

func (b *usageBook) set(w UsageWindow) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.windows[[3]string{w.Plugin, w.Runner, w.Window}] = w
}

// all returns every window, by plugin, runner and window.
func (b *usageBook) all() []UsageWindow {
	b.mu.Lock()
	out := make([]UsageWindow, 0, len(b.windows))
	for _, w := range b.windows {
		out = append(out, w)
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(x, y UsageWindow) int {
		return cmp.Or(cmp.Compare(x.Plugin, y.Plugin), cmp.Compare(x.Runner, y.Runner), cmp.Compare(x.Window, y.Window))
	})
	return out
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

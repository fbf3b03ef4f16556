package core

import (
	"fmt"
	"strings"
)

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

package core

import (
	"fmt"
	"strings"
)

// cmdCost answers /cost: this conversation's and the user's spend today, or
// with all, everyone's (admins only).
func cmdCost(c *call) (string, error) {
	r, m := c.r, c.m
	day := Day(r.clock.Now())
	if c.cmd.Arg == "all" {
		if !c.who.Admin {
			return "", Errorf("/cost all is for admins")
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Spend today (%s, UTC):", day)
		n := 0
		for _, s := range r.convs.Spends() {
			if s.Day == day {
				fmt.Fprintf(&b, "\n%s: %s", s.User, s.Spend)
				n++
			}
		}
		if n == 0 {
			b.WriteString(" nothing yet.")
		}
		return b.String(), nil
	}
	var b strings.Builder
	if c.hasConv {
		fmt.Fprintf(&b, "This conversation: %s\n", c.conv.Spent)
	}
	fmt.Fprintf(&b, "You today (%s, UTC): %s", day, r.convs.Spent(OwnerOf(m), day))
	if r.cfg.Budgets.UserDailyUSD > 0 {
		fmt.Fprintf(&b, "\nDaily budget: $%.2f", r.cfg.Budgets.UserDailyUSD)
	}
	if r.cfg.Budgets.UserDailyTokens > 0 {
		fmt.Fprintf(&b, "\nDaily token budget: %s tokens", kilo(r.cfg.Budgets.UserDailyTokens))
	}
	if r.cfg.Budgets.TurnUSD > 0 {
		fmt.Fprintf(&b, "\nTurn budget: $%.2f", r.cfg.Budgets.TurnUSD)
	}
	return b.String(), nil
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

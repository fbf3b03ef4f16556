package bot_test

import (
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// budgetLoop is Claude Code on a fake model that keeps asking it to run
// a command, with BUDGET_TURN_USD set to stop it after a few calls (each
// costs $0.000075 as Claude Code prices them); calls is how many the
// model would ask for.
func budgetLoop(t *testing.T) (f *fixture, cfg bot.Config, calls int) {
	t.Helper()
	var loop []plugintest.Reply
	for range 8 {
		loop = append(loop, plugintest.Reply{Tool: &plugintest.ToolCall{Name: "Bash", Input: map[string]any{"command": "echo again", "description": "loop"}}})
	}
	f = newFixture(t, append(loop, plugintest.Reply{Text: []string{"Finished the loop."}})...)
	cfg = f.config("--allowedTools", "Bash")
	cfg.Approvals = "auto"
	cfg.BudgetTurnUSD = 0.0002
	return f, cfg, len(loop)
}

// budgetStopped checks that the turn whose reply is got was stopped by
// the budget, and that the chat said why.
func budgetStopped(t *testing.T, f *fixture, expect func(patterns ...string) string, calls int) {
	t.Helper()
	got := expect(`stopped the turn at its cost limit \(\$0\.000\d+ spent\)`, `reaching the turn budget \(BUDGET_TURN_USD\) of \$0\.0002`)
	if strings.Contains(got, "Finished the loop") {
		t.Errorf("the turn ran to its end: %q", got)
	}
	if n := len(f.model.Requests()); n >= calls {
		t.Errorf("the model saw %d requests: the budget did not stop the loop", n)
	}
}

// BUDGET_TURN_USD stops a real Claude Code turn that keeps calling tools,
// at the cost the CLI itself counts, and /cost shows what it reported.
func TestTurnBudgetStopsClaude(t *testing.T) {
	t.Parallel()
	f, cfg, calls := budgetLoop(t)
	cfg.BudgetAdmins = true // the console's user is an admin
	c := f.start(cfg)
	c.say("/claude start", "loop until told")
	c.expect(`started`)
	budgetStopped(t, f, c.expect, calls)
	c.say("/cost")
	c.expect(`This conversation: \$0\.000\d+ · 1 turn · \d+ in / \d+ out tokens`, `Turn budget: \$0\.00`)
	c.close()
}

// Codex and Gemini CLI report tokens, not cost: /cost counts their tokens
// and says their cost is unknown.
func TestCostOfCLIsThatReportTokens(t *testing.T) {
	t.Parallel()
	for _, cli := range otherCLIs {
		t.Run(cli.id, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			cfg := f.config()
			cfg.Approvals = "auto"
			cli.setup(t, f, &cfg, plugintest.Reply{Text: []string{"Counted."}})
			c := f.start(cfg)
			c.say("/"+cli.id+" start", "count me")
			c.expect(`started`)
			c.expect(`Counted\.`)
			c.say("/cost")
			c.expect(`This conversation: \$0\.0000 · 1 turn · [1-9]\d* in / [1-9]\d* out tokens \(1 of them with no cost reported`)
			c.close()
		})
	}
}

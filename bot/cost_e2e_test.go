package bot_test

import (
	"regexp"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BUDGET_TURN_USD stops a real Claude Code turn that keeps calling tools,
// at the cost the CLI itself counts, and /cost shows what it reported.
func TestTurnBudgetStopsClaude(t *testing.T) {
	t.Parallel()
	var loop []plugintest.Reply
	for range 8 {
		loop = append(loop, plugintest.Reply{Tool: &plugintest.ToolCall{Name: "Bash", Input: map[string]any{"command": "echo again", "description": "loop"}}})
	}
	f := newFixture(t, append(loop, plugintest.Reply{Text: []string{"Finished the loop."}})...)
	cfg := f.config("--allowedTools", "Bash")
	cfg.Approvals = "auto"
	// The fake model's calls cost $0.000075 each as Claude Code prices
	// them: the bound stops the turn after a few.
	cfg.BudgetTurnUSD = 0.0002
	cfg.BudgetAdmins = true // the console's user is an admin
	c := f.start(cfg)
	c.say("/claude start", "loop until told")
	c.expect(`started`)
	got := c.expect(`stopped the turn at its cost limit \(\$0\.000\d+ spent\)`, `reaching the turn budget \(BUDGET_TURN_USD\) of \$0\.0002`)
	if regexp.MustCompile(`Finished the loop`).MatchString(got) {
		t.Errorf("the turn ran to its end: %q", got)
	}
	c.say("/cost")
	c.expect(`This conversation: \$0\.000\d+ · 1 turn · \d+ in / \d+ out tokens`, `Turn budget: \$0\.00`)
	c.close()
	if n := len(f.model.Requests()); n >= len(loop) {
		t.Errorf("the model saw %d requests: the budget did not stop the loop", n)
	}
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

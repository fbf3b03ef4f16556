package bot_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Left running (issue 18), on the platform fakes with the real Claude
// Code: what a turn cost comes from the CLI's own result, a turn budget
// stops a turn and says why, a schedule fires on the clock (a cron
// expression's too, read by the library jakebot wires into the router).

// /cost after a turn on Slack shows the cost Claude Code reported, the
// one the reply's footer shows.
func TestCostFromClaudeOnSlack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Counted."}})
	cfg := f.config()
	c := runChat(t, cfg, openSlack(t, &cfg))
	c.start("claude")
	c.say("count me")
	footer := c.expect(`Counted\.`, `— \d+\.\ds · \$(0\.\d{4})`)
	spent := regexp.MustCompile(`\$(0\.\d{4})`).FindStringSubmatch(footer)[1]
	if spent == "0.0000" {
		t.Fatalf("the footer shows no cost: %q", footer)
	}
	c.say("/cost")
	c.expect(`This conversation: \$`+regexp.QuoteMeta(spent)+` · 1 turn · [1-9]\d* in / [1-9]\d* out tokens`,
		`You today \(\d{4}-\d\d-\d\d, UTC\): \$`+regexp.QuoteMeta(spent))
}

// BUDGET_TURN_USD stops a real Claude Code turn that keeps calling tools,
// for a user who is not an admin on Discord, and the chat says why.
func TestTurnBudgetStopsClaudeOnDiscord(t *testing.T) {
	t.Parallel()
	f, cfg, calls := budgetLoop(t)
	c := runChat(t, cfg, openDiscord(t, &cfg))
	c.start("claude")
	c.say("loop until told")
	budgetStopped(t, f, c.expect, calls)
}

// /at on Telegram fires when the router's clock reaches it, not before,
// and runs a real Claude Code turn as the author's message.
func TestScheduleRunsClaudeOnTelegram(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"The build is green."}})
	cfg := f.config()
	clock := coretest.NewManualClock()
	cfg.Clock = clock
	c := runChat(t, cfg, openTelegram(t, &cfg))
	c.start("claude")
	c.say("/at 30m check the build")
	c.expect(`Scheduled #1 \(once\), next at 2026-01-02 03:34 UTC: check the build`)
	// The chat let edit intervals pass on the clock meanwhile: go to a
	// second before the schedule is due.
	due := coretest.Epoch.Add(30 * time.Minute)
	clock.Advance(due.Add(-time.Second).Sub(clock.Now()))
	c.say("/schedules") // answered after anything the clock set off
	c.expect(`#1 once, next at 2026-01-02 03:34 UTC`)
	if n := len(f.model.Requests()); n != 0 {
		t.Fatalf("the model saw %d requests before the schedule was due", n)
	}
	c.mark()
	clock.Advance(time.Second)
	c.expect(`⏰ Schedule #1 \(once\) sends: check the build`)
	c.expect(`The build is green\.`, `— \d+\.\ds`)
	reqs := f.model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].LastUserText(), "check the build") {
		t.Fatalf("the model saw %d requests, want the scheduled message", len(reqs))
	}
	c.say("/schedules")
	c.expect(`Nothing is scheduled here\.`)
}

// /every with a cron expression, read by the library jakebot wires into
// the router, runs a real Claude Code turn when the router's clock
// reaches the time it names.
func TestEveryCronRunsATurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Standup notes written."}})
	cfg := f.config()
	cfg.Approvals = "auto"
	clock := coretest.NewManualClock() // Friday 2026-01-02 03:04 UTC
	cfg.Clock = clock
	c := runChat(t, cfg, openConsole(t, &cfg))
	c.start("claude")
	c.say("/every 0 9 * * 1-5 write the standup notes")
	c.expect(`Scheduled #1 \(cron 0 9 \* \* 1-5\), next at 2026-01-02 09:00 UTC`)
	c.mark()
	clock.Advance(6 * time.Hour)
	c.expect(`⏰ Schedule #1 \(cron 0 9 \* \* 1-5\) sends: write the standup notes`)
	c.expect(`Standup notes written\.`)
	c.say("/schedules")
	c.expect(`#1 cron 0 9 \* \* 1-5, next at 2026-01-05 09:00 UTC`)
}

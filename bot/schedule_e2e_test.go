package bot_test

import (
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

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

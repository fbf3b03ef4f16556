package bot_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// The real Claude Code, signed in with a subscription, against the fake
// model's usage headers: a reply warns of the five-hour window past
// LIMIT_WARN, /limits lists it, and a turn the window refuses (a 429 the
// CLI does not retry) goes on by itself when the router's clock reaches
// the reset, the same message sent again in the same conversation.
func TestUsageLimitsWithTheRealClaude(t *testing.T) {
	t.Parallel()
	// The router's clock starts within the real hour (a round time for
	// the messages), the reset two hours on: the CLI reports no refusal
	// whose reset has passed by the real time.
	start := time.Now().UTC().Truncate(time.Hour).Add(time.Minute)
	reset := start.Add(2 * time.Hour)
	at := regexp.QuoteMeta(reset.Format("15:04") + " UTC")
	f := newFixture(t,
		plugintest.Reply{Text: []string{"Half done."}, Headers: plugintest.UnifiedLimit(0.91, reset)},
		plugintest.UnifiedRejected(reset),
		plugintest.Reply{Text: []string{"All done."}})
	cfg := f.config()
	cfg.Claude.Env = plugintest.SubscriptionEnv(f.env)
	cfg.Approvals = "auto"
	cfg.LimitWarn = 80
	clock := coretest.NewManualClockAt(start)
	cfg.Clock = clock
	c := runChat(t, cfg, openConsole(t, &cfg))
	c.start("claude")
	c.say("do the first half")
	c.expect(`Half done\.`, `Claude Code 5h window 91 % · resets `+at)
	c.say("/limits")
	c.expect(`• Claude Code 5h window 91 % · resets ` + at)
	c.say("do the rest")
	c.expect(`hit your 5-hour limit`)
	c.expect(`🔁 The Claude Code 5h window is used up; it resets at ` + at + ` \(in 2h0m0s\): this message will be sent again then, in this conversation \(schedule #1\)\. /unschedule 1 cancels it; /codex now 1 sends it now to Codex`)
	c.say("/schedules")
	c.expect(`#1 once, when the Claude Code 5h window resets, next at ` + regexp.QuoteMeta(reset.Format("2006-01-02 15:04")) + ` UTC, by .*: do the rest`)
	c.mark()
	clock.Advance(2 * time.Hour)
	c.expect(`⏰ Schedule #1 \(once, when the Claude Code 5h window resets\) sends: do the rest`)
	c.expect(`All done\.`)
	if reqs := f.model.Requests(); len(reqs) != 3 {
		t.Errorf("the model got %d requests, want 3", len(reqs))
	}
}

// The real Gemini CLI, refused by a quota whose retry is an hour away (it
// gives up at once rather than wait): the chat says when the quota comes
// back, the continuation is a schedule, and when the router's clock
// passes that time the same message goes to Gemini again and is answered.
func TestGeminiQuotaContinuesWithTheRealGemini(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := f.config()
	// Gemini computes the reset from the real time; the router's clock
	// starts there and is moved past it by hand.
	clock := coretest.NewManualClockAt(time.Now())
	cfg.Clock = clock
	model := otherCLIs[1].setup(t, f, &cfg,
		plugintest.Reply{Status: 429, Message: "You exceeded your current quota, please check your plan and billing details. Please retry in 3600s."},
		plugintest.Reply{Text: []string{"Quota back, done."}})
	c := runChat(t, cfg, openConsole(t, &cfg))
	c.start("gemini")
	c.say("do the work")
	c.expect(`🔁 The Gemini CLI quota window is used up; it resets at \d\d:\d\d UTC \(in (59m\d+s|1h0m0s)\): this message will be sent again then, in this conversation \(schedule #1\)`)
	c.say("/schedules")
	c.expect(`#1 once, when the Gemini CLI quota window resets, next at .* UTC, by .*: do the work`)
	c.mark()
	clock.Advance(time.Hour + time.Minute)
	c.expect(`⏰ Schedule #1 \(once, when the Gemini CLI quota window resets\) sends: do the work`)
	c.expect(`Quota back, done\.`)
	if reqs := model.Requests(); len(reqs) < 2 || !strings.Contains(reqs[len(reqs)-1].Text(), "do the work") {
		t.Errorf("the model got %d requests, the last without the message again", len(reqs))
	}
}

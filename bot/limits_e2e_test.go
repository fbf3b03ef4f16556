package bot_test

import (
	"path/filepath"
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
	// Gemini dates the retry from the real time it is refused at, however
	// long the CLI took to get there; the router's clock starts at the
	// real time and is moved past the reset by hand.
	clock := coretest.NewManualClockAt(time.Now())
	start := clock.Now()
	cfg.Clock = clock
	model := otherCLIs[1].setup(t, f, &cfg,
		plugintest.Reply{Status: 429, Message: "You exceeded your current quota, please check your plan and billing details. Please retry in 3600s."},
		plugintest.Reply{Text: []string{"Quota back, done."}})
	c := runChat(t, cfg, openConsole(t, &cfg))
	c.start("gemini")
	before := time.Now()
	c.say("do the work")
	note := c.expect(`🔁 The Gemini CLI quota window is used up; it resets at \d\d:\d\d UTC \(in \w+\): this message will be sent again then, in this conversation \(schedule #1\)`)
	after := time.Now()
	// The refusal came between before and after, the reset an hour (the
	// 3600s, to the second) after it; the note says how far that is from
	// the router's clock, which stood between start and now.
	m := regexp.MustCompile(`resets at (\d\d:\d\d) UTC \(in (\w+)\)`).FindStringSubmatch(note)
	in, err := time.ParseDuration(m[2])
	if err != nil {
		t.Fatalf("the note's wait %q: %v", m[2], err)
	}
	earliest, latest := before.Add(time.Hour-time.Second), after.Add(time.Hour)
	if lo, hi := earliest.Sub(clock.Now())-time.Minute/2, latest.Sub(start)+time.Minute/2; in < lo || in > hi {
		t.Errorf("the note says the reset is in %v, want it between %v and %v: an hour after the refusal", in, lo, hi)
	}
	inRange := false
	for at := earliest.Truncate(time.Minute); !at.After(latest); at = at.Add(time.Minute) {
		inRange = inRange || at.UTC().Format("15:04") == m[1]
	}
	if !inRange {
		t.Errorf("the note says the reset is at %s, want it between %s and %s", m[1], earliest.UTC().Format("15:04"), latest.UTC().Format("15:04"))
	}
	c.say("/schedules")
	c.expect(`#1 once, when the Gemini CLI quota window resets, next at .* UTC, by .*: do the work`)
	c.mark()
	clock.Advance(latest.Add(time.Second).Sub(clock.Now()))
	c.expect(`⏰ Schedule #1 \(once, when the Gemini CLI quota window resets\) sends: do the work`)
	c.expect(`Quota back, done\.`)
	if reqs := model.Requests(); len(reqs) < 2 || !strings.Contains(reqs[len(reqs)-1].Text(), "do the work") {
		t.Errorf("the model got %d requests, the last without the message again", len(reqs))
	}
}

// A usage window the real Claude Code reported before a restart is still
// what /limits shows after it: the windows are saved with the rest of the
// state (STATE_FILE here; the same snapshot a standby loads from NATS).
func TestUsageWindowsSurviveARestart(t *testing.T) {
	t.Parallel()
	reset := time.Now().UTC().Add(2 * time.Hour)
	at := regexp.QuoteMeta(reset.Format("15:04") + " UTC")
	f := newFixture(t, plugintest.Reply{Text: []string{"Half done."}, Headers: plugintest.UnifiedLimit(0.91, reset)})
	cfg := f.config()
	cfg.Claude.Env = plugintest.SubscriptionEnv(f.env)
	cfg.StateFile = filepath.Join(t.TempDir(), "state.json")

	first := f.start(cfg)
	first.say("/claude start", "do the first half")
	first.expect(`started`)
	first.expect(`Half done\.`, `Claude Code 5h window 91 % · resets `+at)
	first.close()

	second := f.start(cfg)
	second.say("/limits")
	second.expect(`• Claude Code 5h window 91 % · resets ` + at)
	second.close()
}

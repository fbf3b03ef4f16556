package gemini

import (
	"regexp"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// retryIn is how the API's quota error says when to try again; the CLI
// waits that out itself up to five minutes (MAX_RETRYABLE_DELAY_SECONDS
// in 0.61), and gives up at once beyond.
var retryIn = regexp.MustCompile(`Please retry in ([0-9.]+(?:ms|s))`)

// quotaWindow reads a failed turn's error: a quota the CLI gave up on
// (a 429 RESOURCE_EXHAUSTED whose retry is more than five minutes away)
// is the "quota" window, used up until the retry time after now. A
// daily quota says no time: ok is false, and the turn's error stands.
func quotaWindow(msg string, now time.Time) (w core.UsageWindow, ok bool) {
	m := retryIn.FindStringSubmatch(msg)
	if m == nil || !strings.Contains(strings.ToLower(msg), "quota") {
		return core.UsageWindow{}, false
	}
	d, err := time.ParseDuration(m[1])
	if err != nil || d <= 0 {
		return core.UsageWindow{}, false
	}
	return core.UsageWindow{Window: "quota", UsedPercent: 100, ResetsAt: now.Add(d).Truncate(time.Second), Rejected: true}, true
}

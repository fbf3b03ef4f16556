package plugintest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// UnifiedLimit returns the headers with which the Anthropic API tells a
// subscription where its five-hour window stands (a Reply's Headers):
// used, a fraction, past the 0.8 warning threshold when it is. Claude
// Code turns them into a rate_limit_event, signed in with
// SubscriptionEnv only.
func UnifiedLimit(used float64, reset time.Time) map[string]string {
	h := map[string]string{
		"anthropic-ratelimit-unified-status":               "allowed",
		"anthropic-ratelimit-unified-reset":                fmt.Sprint(reset.Unix()),
		"anthropic-ratelimit-unified-representative-claim": "five_hour",
		"anthropic-ratelimit-unified-5h-utilization":       fmt.Sprint(used),
		"anthropic-ratelimit-unified-5h-reset":             fmt.Sprint(reset.Unix()),
	}
	if used >= 0.8 {
		h["anthropic-ratelimit-unified-status"] = "allowed_warning"
		h["anthropic-ratelimit-unified-5h-surpassed-threshold"] = "0.8"
	}
	return h
}

// UnifiedRejected is the Reply with which the Anthropic API refuses a
// subscription's request when its five-hour window is used up: a 429 the
// CLI does not retry, ending the turn with "You've hit your … limit".
func UnifiedRejected(reset time.Time) Reply {
	return Reply{Status: 429, Message: "Rate limited", Headers: map[string]string{
		"anthropic-ratelimit-unified-status":               "rejected",
		"anthropic-ratelimit-unified-reset":                fmt.Sprint(reset.Unix()),
		"anthropic-ratelimit-unified-representative-claim": "five_hour",
	}}
}

// SubscriptionEnv is env (ClaudeEnv's) signed in with a subscription
// token instead of an API key: only then does Claude Code report usage
// windows.
func SubscriptionEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			out = append(out, kv)
		}
	}
	return append(out, "CLAUDE_CODE_OAUTH_TOKEN=fake-subscription-token")
}

// CodexLimits returns the headers with which the ChatGPT backend tells
// Codex where its windows stand: the five-hour one (primary) used
// primary percent, the weekly one (secondary) secondary percent. The
// app-server sends them as account/rateLimits/updated.
func CodexLimits(primary, secondary float64, primaryReset, secondaryReset time.Time) map[string]string {
	return map[string]string{
		"x-codex-primary-used-percent":     fmt.Sprint(primary),
		"x-codex-primary-window-minutes":   "300",
		"x-codex-primary-reset-at":         fmt.Sprint(primaryReset.Unix()),
		"x-codex-secondary-used-percent":   fmt.Sprint(secondary),
		"x-codex-secondary-window-minutes": "10080",
		"x-codex-secondary-reset-at":       fmt.Sprint(secondaryReset.Unix()),
	}
}

// Refused is a Scripted plugin's Script that refuses every turn as Claude
// Code does when its five-hour window is used up: the window reported
// rejected, resetting at reset, then an error result.
func Refused(reset time.Time) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.LimitEvent(core.UsageWindow{Window: "5h", UsedPercent: 100, ResetsAt: reset, Rejected: true}))
		emit(core.ErrorEvent("You've hit your 5-hour limit"))
		return core.TurnResult{SessionID: t.SessionID, IsError: true}, nil
	}
}

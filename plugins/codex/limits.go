package codex

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// rateLimitWindow is one window of account/rateLimits/updated, which the
// app-server sends after every model response, from the backend's
// x-codex-primary-* and x-codex-secondary-* headers (null without them):
//
//	{"rateLimits":{"primary":{"usedPercent":43,"windowDurationMins":300,"resetsAt":1795719135},
//	 "secondary":{"usedPercent":7,"windowDurationMins":10080,"resetsAt":1795974735},
//	 "rateLimitReachedType":null}}
type rateLimitWindow struct {
	UsedPercent float64 `json:"usedPercent"`
	WindowMins  int     `json:"windowDurationMins"`
	ResetsAt    int64   `json:"resetsAt"`
}

// rateLimits emits the windows of an account/rateLimits/updated; one
// used up is marked Rejected.
func (p *Parser) rateLimits(params json.RawMessage) {
	var n struct {
		RateLimits struct {
			Primary   *rateLimitWindow `json:"primary"`
			Secondary *rateLimitWindow `json:"secondary"`
		} `json:"rateLimits"`
	}
	if json.Unmarshal(params, &n) != nil {
		return
	}
	for _, w := range []*rateLimitWindow{n.RateLimits.Primary, n.RateLimits.Secondary} {
		if w == nil || w.WindowMins <= 0 {
			continue
		}
		// A window used up refuses turns: rateLimitReachedType, which
		// would say so, came null in 0.171.0 even for a 429
		// usage_limit_reached (TestUsageWindowUsedUp).
		uw := core.UsageWindow{Window: windowName(w.WindowMins), UsedPercent: int(w.UsedPercent + 0.5),
			Rejected: w.UsedPercent >= 100}
		if w.ResetsAt > 0 {
			uw.ResetsAt = time.Unix(w.ResetsAt, 0).UTC()
		}
		p.emit(core.LimitEvent(uw))
	}
}

// windowName names a window by its length: "5h", "weekly".
func windowName(mins int) string {
	switch {
	case mins == 7*24*60:
		return "weekly"
	case mins%(24*60) == 0:
		return fmt.Sprintf("%dd", mins/(24*60))
	case mins%60 == 0:
		return fmt.Sprintf("%dh", mins/60)
	}
	return fmt.Sprintf("%dmin", mins)
}

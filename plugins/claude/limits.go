package claude

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// rateLimitInfo is a rate_limit_event's: the CLI sends one after a model
// response that carried anthropic-ratelimit-unified-* headers, which the
// API sends only to a subscription (CLAUDE_CODE_OAUTH_TOKEN), never to an
// API key. Seen with 2.1.332:
//
//	{"status":"allowed_warning","resetsAt":1795721683,"rateLimitType":"five_hour","utilization":0.91,
//	 "surpassedThreshold":0.9,"unifiedWindows":{"five_hour":{"utilization":0.91,"resetsAt":1795721683}}}
//	{"status":"rejected","resetsAt":1795721683,"rateLimitType":"five_hour"}
type rateLimitInfo struct {
	Status         string                       `json:"status"`
	ResetsAt       int64                        `json:"resetsAt"`
	Type           string                       `json:"rateLimitType"`
	Utilization    *float64                     `json:"utilization"`
	UnifiedWindows map[string]unifiedWindowInfo `json:"unifiedWindows"`
}

type unifiedWindowInfo struct {
	Utilization *float64 `json:"utilization"`
	ResetsAt    int64    `json:"resetsAt"`
}

// windowNames are the chat's names of the CLI's rateLimitType values.
var windowNames = map[string]string{
	"five_hour":        "5h",
	"seven_day":        "weekly",
	"seven_day_opus":   "weekly Opus",
	"seven_day_sonnet": "weekly Sonnet",
}

// windowName is the chat's name of a window type; an unknown type keeps
// the CLI's.
func windowName(typ string) string { return cmp.Or(windowNames[typ], typ) }

// rateLimit emits the windows of a rate_limit_event: each of its
// unifiedWindows, and the one it is about (rateLimitType), which a
// refusal names alone.
func (p *Parser) rateLimit(info *rateLimitInfo) {
	if info == nil || info.Type == "" {
		return
	}
	rejected := info.Status == "rejected"
	main := core.UsageWindow{Window: windowName(info.Type), UsedPercent: percent(info.Utilization),
		ResetsAt: unixTime(info.ResetsAt), Rejected: rejected}
	if rejected && main.UsedPercent < 0 {
		main.UsedPercent = 100
	}
	types := make([]string, 0, len(info.UnifiedWindows))
	for typ := range info.UnifiedWindows {
		if typ != info.Type {
			types = append(types, typ)
		}
	}
	slices.Sort(types)
	for _, typ := range types {
		w := info.UnifiedWindows[typ]
		p.emit(core.LimitEvent(core.UsageWindow{Window: windowName(typ), UsedPercent: percent(w.Utilization), ResetsAt: unixTime(w.ResetsAt)}))
	}
	p.emit(core.LimitEvent(main))
}

// percent is a utilization (0.91) in whole percent, -1 when not given.
func percent(u *float64) int {
	if u == nil {
		return -1
	}
	return int(math.Round(*u * 100))
}

func unixTime(s int64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

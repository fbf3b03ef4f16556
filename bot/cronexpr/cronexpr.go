// Package cronexpr reads /every's cron expressions with robfig/cron, a
// well-kept parser, for the router (core.RouterConfig.ParseCron), which
// itself depends only on the standard library.
package cronexpr

import (
	"github.com/robfig/cron/v3"

	"github.com/jake-bot/jake-bot/core"
)

// Parse reads a standard cron expression: five fields (minute, hour, day
// of month, month, day of week), or a descriptor such as @daily or
// @every 2h. It returns the library's error for anything else. It is safe
// for concurrent use.
func Parse(expr string) (core.Cron, error) {
	return cron.ParseStandard(expr)
}

var _ func(string) (core.Cron, error) = Parse

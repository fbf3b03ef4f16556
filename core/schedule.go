package core

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// Cron is a parsed cron expression: Next returns when it runs next after
// t. RouterConfig.ParseCron makes them; core parses none itself.
type Cron interface {
	Next(t time.Time) time.Time
}

// origin is the origin of the messages s sends.
func (s Schedule) origin() OriginKind {
	switch {
	case s.Agent:
		return OriginAgentSchedule
	case s.Limit != "":
		return OriginContinuation
	}
	return OriginSchedule
}

// repeats says how it repeats, for listings: "every 30m", "0 9 * * 1-5".
func (s Schedule) repeats() string {
	switch {
	case s.Every > 0:
		return "every " + s.Every.String()
	case s.Cron != "":
		return "cron " + s.Cron
	case s.Limit != "":
		return "once, when the " + s.Limit + " window resets"
	}
	return "once"
}

// after returns when a repeating schedule runs next after t, reading a
// cron expression with parseCron; ok is false for one that runs once, or
// whose expression can no longer be read.
func (s Schedule) after(t time.Time, parseCron func(string) (Cron, error)) (next time.Time, ok bool) {
	switch {
	case s.Every > 0:
		next = s.Next
		for !next.After(t) {
			next = next.Add(s.Every)
		}
		return next, true
	case s.Cron != "" && parseCron != nil:
		sched, err := parseCron(s.Cron)
		if err != nil {
			return time.Time{}, false
		}
		return sched.Next(t), true
	}
	return time.Time{}, false
}

// Limits on what an agent sets going on by itself (its schedule tool):
// one turn may not keep its conversation running unattended for ever.
const (
	// minAgentDelay is the soonest an agent's schedule may fire, as
	// /every's least interval.
	minAgentDelay = time.Minute
	// maxAgentDepth is how many turns in a row an agent's schedules may
	// start before a person writes again.
	maxAgentDepth = 3
	// maxAgentSchedules is how many of an agent's schedules may wait in
	// one conversation.
	maxAgentSchedules = 3
)

// Limits on schedules.
const (
	maxSchedulesPerUser = 20
	minEvery            = time.Minute
	maxAhead            = 366 * 24 * time.Hour
	// lateAfter is how far past its time a schedule runs before it is
	// called late (the bot was down).
	lateAfter = time.Minute
)

// AddSchedule stores s with a new ID, which it returns.
func (c *State) AddSchedule(s Schedule) int {
	c.mu.Lock()
	c.nextSchedule++
	s.ID = c.nextSchedule
	c.schedules[s.ID] = s
	c.mu.Unlock()
	c.changed()
	return s.ID
}

// Schedules returns every schedule, by ID.
func (c *State) Schedules() []Schedule {
	c.mu.RLock()
	out := slices.Collect(maps.Values(c.schedules))
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b Schedule) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// RemoveSchedule deletes schedule id and reports whether it existed.
func (c *State) RemoveSchedule(id int) bool {
	c.mu.Lock()
	_, ok := c.schedules[id]
	delete(c.schedules, id)
	c.mu.Unlock()
	if ok {
		c.changed()
	}
	return ok
}

// removeSchedulesOf deletes every schedule of conversation k and returns
// how many there were.
func (c *State) removeSchedulesOf(k ConversationKey) int {
	c.mu.Lock()
	n := 0
	for id, s := range c.schedules {
		if s.Key == k {
			delete(c.schedules, id)
			n++
		}
	}
	c.mu.Unlock()
	if n > 0 {
		c.changed()
	}
	return n
}

// setScheduleNext moves schedule id to next, unless it was removed.
func (c *State) setScheduleNext(id int, next time.Time) {
	c.mu.Lock()
	s, ok := c.schedules[id]
	if ok {
		s.Next = next
		c.schedules[id] = s
	}
	c.mu.Unlock()
	if ok {
		c.changed()
	}
}

// putSchedule stores s under its ID, again.
func (c *State) putSchedule(s Schedule) {
	c.mu.Lock()
	c.schedules[s.ID] = s
	c.mu.Unlock()
	c.changed()
}

// LoadSchedules adds saved schedules, as at start-up.
func (c *State) LoadSchedules(schedules []Schedule) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range schedules {
		c.schedules[s.ID] = s
		c.nextSchedule = max(c.nextSchedule, s.ID)
	}
}

// parseAt reads /at's argument: when (30m, 2h, 09:00, an RFC 3339 time),
// then the message.
func parseAt(arg string, now time.Time) (Schedule, error) {
	when, text := cutWord(arg)
	if text == "" {
		return Schedule{}, usageError("/at <when> <message>: when is 30m, 2h, 09:00 or an RFC 3339 time")
	}
	var next time.Time
	if d, err := time.ParseDuration(when); err == nil {
		if d <= 0 {
			return Schedule{}, Errorf("%s is not in the future", when)
		}
		next = now.Add(d)
	} else if t, err := time.ParseInLocation("15:04", when, now.Location()); err == nil {
		next = time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
		if !next.After(now) {
			next = next.AddDate(0, 0, 1)
		}
	} else if t, err := time.Parse(time.RFC3339, when); err == nil {
		if !t.After(now) {
			return Schedule{}, Errorf("%s has passed", when)
		}
		next = t
	} else {
		return Schedule{}, Errorf("%q is not a time: use 30m, 2h, 09:00 or an RFC 3339 time such as 2026-12-01T09:00:00Z", when)
	}
	if next.Sub(now) > maxAhead {
		return Schedule{}, Errorf("%s is more than a year ahead", when)
	}
	return Schedule{Text: text, Next: next}, nil
}

// parseEvery reads /every's argument: an interval (30m, 2h) or a cron
// expression (five fields, or @daily and the like) that parseCron reads,
// then the message. A nil parseCron refuses cron expressions.
func parseEvery(arg string, now time.Time, parseCron func(string) (Cron, error)) (Schedule, error) {
	first, rest := cutWord(arg)
	// "0" parses as a duration, and starts many cron expressions.
	if d, err := time.ParseDuration(first); err == nil && first != "0" {
		if rest == "" {
			return Schedule{}, usageError("/every <interval or cron> <message>")
		}
		if d < minEvery {
			return Schedule{}, Errorf("every %s is too often: the least interval is %s", d, minEvery)
		}
		return Schedule{Text: rest, Every: d, Next: now.Add(d)}, nil
	}
	expr, text := first, rest
	if !strings.HasPrefix(first, "@") {
		fields := strings.Fields(arg)
		if len(fields) < 6 {
			return Schedule{}, usageError("/every <interval or cron> <message>: an interval such as 30m, or a cron expression of five fields (0 9 * * 1-5) or @daily")
		}
		expr = strings.Join(fields[:5], " ")
		text = arg
		for range 5 {
			_, text = cutWord(text)
		}
	}
	if text == "" {
		return Schedule{}, usageError("/every <interval or cron> <message>")
	}
	if parseCron == nil {
		return Schedule{}, Errorf("%q is not an interval, and this bot reads no cron expressions: use an interval such as 30m or 24h", expr)
	}
	sched, err := parseCron(expr)
	if err != nil {
		return Schedule{}, Errorf("%q is not an interval or a cron expression: %v", expr, err)
	}
	next := sched.Next(now)
	if second := sched.Next(next); second.Sub(next) < minEvery {
		return Schedule{}, Errorf("%q runs too often: the least interval is %s", expr, minEvery)
	}
	return Schedule{Text: text, Cron: expr, Next: next}, nil
}

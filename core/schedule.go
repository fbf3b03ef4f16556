package core

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Cron is a parsed cron expression: Next returns when it runs next after
// t. RouterConfig.ParseCron makes them; core parses none itself.
type Cron interface {
	Next(t time.Time) time.Time
}

// Schedule is a message /at or /every sends on a user's behalf, into the
// conversation it was set in, as if they had typed it then.
type Schedule struct {
	ID  int
	Key ConversationKey
	// From and UserName are the author's, as on their message. Whether
	// they may still use the bot is checked each time it fires, against
	// Access or, for a user Access does not list, by asking the platform's
	// own rule again (Readmitter: a Discord role); how they were admitted
	// when they scheduled it is not stored.
	From     string
	UserName string
	Text     string
	// Next is when it runs next. Every or Cron repeats it; neither means
	// it runs once.
	Next  time.Time
	Every time.Duration
	Cron  string
	// Limit, for a turn refused by a usage window, names the window
	// ("Claude Code 5h") at whose reset Next sends it again, and Prompt
	// is the refused message itself (Text may be "continue"): what its
	// Start with another CLI now button sends.
	Limit  string
	Prompt string
	// Agent marks a schedule the agent of a turn of From set (its
	// schedule tool): its message only ever starts a turn of its own,
	// marked as the agent's, with an agent's rights (Router.permitsOf).
	// Depth is how many agent schedules in a row it ends: 1 for one set
	// in a person's turn, 2 for one set in the turn that one started.
	Agent bool
	Depth int
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

// cmdSchedule answers /at and /every: the message is kept and sent when due.
// A user admitted by a platform's rule (a role) may schedule only where
// the platform checks the rule again each time the schedule fires
// (Readmitter): losing the role must stop it.
func cmdSchedule(c *call) (string, error) { return c.schedule(c.cmd) }

// schedule adds the schedule of cmd, an /at or /every, to c's
// conversation: its author's, or the agent's for its schedule tool.
func (c *call) schedule(cmd Command) (string, error) {
	r, m := c.r, c.m
	if !c.hasConv {
		return r.noConversation(), nil
	}
	if _, readmits := c.a.p.(Readmitter); !readmits && !r.cfg.Access.Allowed(m.Key.Platform, m.Author()) {
		return "", Errorf("you are admitted by a rule of %s (such as a role) that cannot be checked again when a schedule runs while you are away: /at and /every need your id, %s, on the bot's allow-list (ask the operator)", m.Key.Platform, m.Author())
	}
	now := r.clock.Now()
	var s Schedule
	var err error
	if cmd.Name == CmdEvery {
		s, err = parseEvery(cmd.Arg, now, r.cfg.ParseCron)
	} else {
		s, err = parseAt(cmd.Arg, now)
	}
	if err != nil {
		return "", err
	}
	n, agents := 0, 0
	for _, o := range r.convs.Schedules() {
		if o.Key.Platform == m.Key.Platform && o.From == m.Author() {
			n++
		}
		if o.Agent && o.Key == m.Key {
			agents++
		}
	}
	if n >= maxSchedulesPerUser {
		return "", Errorf("you have %d schedules, the most one may have: /unschedule one first", n)
	}
	if m.origin == OriginAgent {
		if err := agentScheduleLimits(s, m, now, agents); err != nil {
			return "", err
		}
		s.Agent, s.Depth = true, m.depth+1
	}
	s.Key, s.From, s.UserName = m.Key, m.Author(), m.UserName
	id := r.convs.AddSchedule(s)
	r.sched.armSchedules()
	return fmt.Sprintf("Scheduled #%d (%s), next at %s: %s\n/schedules lists them, /unschedule %d removes it.",
		id, s.repeats(), s.Next.Format("2006-01-02 15:04 MST"), Shorten(s.Text, 80), id), nil
}

// agentScheduleLimits refuses schedule s that the agent of m's turn sets
// at now, agents of its schedules waiting in the conversation already,
// beyond what an agent may set going on by itself.
func agentScheduleLimits(s Schedule, m Message, now time.Time, agents int) error {
	switch {
	case s.Next.Sub(now) < minAgentDelay:
		return Errorf("a schedule of yours fires %s from now at the soonest", minAgentDelay)
	case m.depth >= maxAgentDepth:
		return Errorf("schedules of yours started %d turns in a row, this one included, the most there may be until a person writes here", m.depth)
	case agents >= maxAgentSchedules:
		return Errorf("%d schedules of yours wait in this conversation already, the most there may be: they are in /schedules", agents)
	}
	return nil
}

// cmdSchedules answers /schedules: this conversation's.
func cmdSchedules(c *call) (string, error) {
	var b strings.Builder
	for _, s := range c.r.convs.Schedules() {
		if s.Key == c.m.Key {
			fmt.Fprintf(&b, "\n#%d %s, next at %s, by %s: %s", s.ID, s.repeats(), s.Next.Format("2006-01-02 15:04 MST"),
				cmp.Or(s.UserName, s.From), Shorten(s.Text, 80))
		}
	}
	if b.Len() == 0 {
		return "Nothing is scheduled here. /at 30m <message> or /every 1h <message> schedule one.", nil
	}
	return "Scheduled here:" + b.String(), nil
}

// cmdUnschedule answers /unschedule N: its author or an admin may.
func cmdUnschedule(c *call) (string, error) {
	s, err := c.ownSchedule(c.cmd.Arg)
	if err != nil {
		return "", err
	}
	c.r.convs.RemoveSchedule(s.ID)
	c.r.sched.armSchedules()
	return fmt.Sprintf("Removed schedule #%d.", s.ID), nil
}

// ownSchedule returns the schedule numbered arg, provided c's author set
// it or is an admin.
func (c *call) ownSchedule(arg string) (Schedule, error) {
	r, m := c.r, c.m
	id, err := strconv.Atoi(strings.TrimPrefix(arg, "#"))
	if err != nil {
		return Schedule{}, Errorf("%q is not a schedule's number: /schedules lists them", arg)
	}
	for _, s := range r.convs.Schedules() {
		if s.ID != id {
			continue
		}
		if !c.who.Admin && (s.Key.Platform != m.Key.Platform || s.From != m.Author()) {
			return Schedule{}, Errorf("schedule #%d is someone else's", id)
		}
		return s, nil
	}
	return Schedule{}, Errorf("there is no schedule #%d: /schedules lists them", id)
}

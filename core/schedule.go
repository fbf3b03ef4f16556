package core

import (
	"cmp"
	"context"
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
	// marked as the agent's, with an agent's rights (Router.permit).
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

// schedule answers /at and /every: the message is kept and sent when due.
// A user admitted by a platform's rule (a role) may schedule only where
// the platform checks the rule again each time the schedule fires
// (Readmitter): losing the role must stop it.
func (r *Router) schedule(a *attached, m Message, cmd Command) (string, error) {
	if _, ok := r.convs.Get(m.Key); !ok {
		return r.noConversation(), nil
	}
	if _, readmits := a.p.(Readmitter); !readmits && !r.cfg.Access.Allowed(m.Key.Platform, m.Author()) {
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
	r.armSchedules()
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

// listSchedules answers /schedules: this conversation's.
func (r *Router) listSchedules(m Message) string {
	var b strings.Builder
	for _, s := range r.convs.Schedules() {
		if s.Key == m.Key {
			fmt.Fprintf(&b, "\n#%d %s, next at %s, by %s: %s", s.ID, s.repeats(), s.Next.Format("2006-01-02 15:04 MST"),
				cmp.Or(s.UserName, s.From), Shorten(s.Text, 80))
		}
	}
	if b.Len() == 0 {
		return "Nothing is scheduled here. /at 30m <message> or /every 1h <message> schedule one."
	}
	return "Scheduled here:" + b.String()
}

// unschedule answers /unschedule N: its author or an admin may.
func (r *Router) unschedule(m Message, arg string) (string, error) {
	s, err := r.ownSchedule(m, arg)
	if err != nil {
		return "", err
	}
	r.convs.RemoveSchedule(s.ID)
	r.armSchedules()
	return fmt.Sprintf("Removed schedule #%d.", s.ID), nil
}

// ownSchedule returns the schedule numbered arg, provided m's author set
// it or is an admin.
func (r *Router) ownSchedule(m Message, arg string) (Schedule, error) {
	id, err := strconv.Atoi(strings.TrimPrefix(arg, "#"))
	if err != nil {
		return Schedule{}, Errorf("%q is not a schedule's number: /schedules lists them", arg)
	}
	for _, s := range r.convs.Schedules() {
		if s.ID != id {
			continue
		}
		if !r.isAdmin(m) && (s.Key.Platform != m.Key.Platform || s.From != m.Author()) {
			return Schedule{}, Errorf("schedule #%d is someone else's", id)
		}
		return s, nil
	}
	return Schedule{}, Errorf("there is no schedule #%d: /schedules lists them", id)
}

// armSchedules sets the timer for the earliest schedule, replacing the
// one set before.
func (r *Router) armSchedules() {
	r.schedMu.Lock()
	defer r.schedMu.Unlock()
	if r.schedTimer != nil {
		r.schedTimer.Stop()
		r.schedTimer = nil
	}
	var next time.Time
	for _, s := range r.convs.Schedules() {
		// A platform not attached yet arms its schedules when it is.
		attached := r.platforms.get(s.Key.Platform) != nil
		if attached && !r.flight.holds(s) && (next.IsZero() || s.Next.Before(next)) {
			next = s.Next
		}
	}
	if next.IsZero() || r.turnCtx.Err() != nil {
		return
	}
	r.schedTimer = r.clock.AfterFunc(max(0, next.Sub(r.clock.Now())), r.runSchedules)
}

// runSchedules sends every schedule that is due, from its author, to a
// platform that is attached; one whose platform is not (yet) waits. A
// schedule missed while the bot was down runs once, and says it is late.
func (r *Router) runSchedules() {
	r.flight.run.Lock()
	defer r.flight.run.Unlock()
	now := r.clock.Now()
	for _, s := range r.convs.Schedules() {
		if s.Next.After(now) {
			continue
		}
		a := r.platforms.get(s.Key.Platform)
		if a == nil || r.flight.holds(s) || r.skipBusy(a, s, now) {
			continue
		}
		admitted, byRule := r.admitSchedule(a, s, now)
		if !admitted {
			continue
		}
		r.advanceSchedule(s, now)
		if r.unattendedCapped(a, s, now) {
			continue
		}
		m := Message{Key: s.Key, ID: fmt.Sprintf("schedule-%d-%d", s.ID, now.Unix()), From: s.From, UserName: s.UserName,
			Text: s.Text, Allowed: byRule, Done: r.flight.start(s, r.heldBack), origin: s.origin(), depth: s.Depth}
		note := fmt.Sprintf("⏰ Schedule #%d (%s) sends: %s", s.ID, s.repeats(), Shorten(s.Text, 200))
		if s.Agent {
			note = fmt.Sprintf("⏰ Scheduled by the agent (#%d, %s, in %s's conversation), a turn of its own: %s", s.ID, s.repeats(), cmp.Or(s.UserName, s.From), Shorten(s.Text, 200))
		}
		if late := now.Sub(s.Next); late > lateAfter {
			note += fmt.Sprintf("\nIt is late: it was due at %s, while the bot was not running.", s.Next.Format("2006-01-02 15:04 MST"))
		}
		r.logger.Info("schedule due", "schedule", s.ID, "conversation", s.Key.String(), "user", s.From)
		r.reply(a, m.Target(), note)
		r.handle(r.turnCtx, a, m)
	}
	r.armSchedules()
}

// heldBack arms the schedules again once a message that held some back
// (runSchedules) is handled: those are due already, so their timer fires
// at once. Arming rather than running them here keeps every firing on the
// router's clock, and done before the message's turn counts as over: a
// goroutine of its own raced the clock (a test's clock moved on while it
// re-armed left the next firing set a step late) and outlived Wait.
func (r *Router) heldBack() {
	if r.turnCtx.Err() == nil {
		r.armSchedules()
	}
}

// skipBusy skips a firing of repeating schedule s, due at now, while its
// previous one still runs or waits, and says so once.
func (r *Router) skipBusy(a *attached, s Schedule, now time.Time) bool {
	busy, first := r.flight.busy(s)
	if !busy {
		return false
	}
	r.advanceSchedule(s, now)
	r.logger.Info("schedule skipped: its previous message is still being handled", "schedule", s.ID, "conversation", s.Key.String())
	if first {
		r.reply(a, s.Key.Target(), fmt.Sprintf("⏰ Schedule #%d (%s) was skipped: its previous message still runs or waits for an answer. Later firings are skipped likewise, without a word, until it is done.", s.ID, s.repeats()))
	}
	return true
}

// advanceSchedule moves schedule s, due at now, to its next time, or
// removes it when it ran once.
func (r *Router) advanceSchedule(s Schedule, now time.Time) {
	if next, ok := s.after(now, r.cfg.ParseCron); ok {
		r.convs.setScheduleNext(s.ID, next)
	} else {
		r.convs.RemoveSchedule(s.ID)
	}
}

// readmitTimeout bounds how long a platform may take to check again that
// a schedule's author is admitted (Readmitter).
const readmitTimeout = 30 * time.Second

// admitSchedule reports whether schedule s, due at now, may send its
// message: its author is on the allow-list, or the platform's own rule
// admits them still (byRule: the platform's Readmitter said so). An author
// admitted no more loses the schedule: silently on a platform that cannot
// check its rule again (nothing of theirs is posted or run), with a note
// to the chat where it can. When the platform could not tell, this time is
// skipped, with a note, and a repeating schedule stays.
func (r *Router) admitSchedule(a *attached, s Schedule, now time.Time) (admitted, byRule bool) {
	if r.cfg.Access.Allowed(s.Key.Platform, s.From) {
		return true, false
	}
	ra, ok := a.p.(Readmitter)
	if !ok {
		r.logger.Warn("schedule dropped: its author is not allowed", "schedule", s.ID, "user", s.From)
		r.convs.RemoveSchedule(s.ID)
		return false, false
	}
	ctx, cancel := context.WithTimeout(r.turnCtx, readmitTimeout)
	defer cancel()
	admitted, err := ra.Readmit(ctx, s.Key, s.From)
	who, to := cmp.Or(s.UserName, s.From), s.Key.Target()
	switch {
	case err != nil:
		r.logger.Warn("schedule skipped: its author's admission could not be checked", "schedule", s.ID, "user", s.From, "err", err)
		r.advanceSchedule(s, now)
		r.reply(a, to, fmt.Sprintf("⏰ Schedule #%d was not sent this time: %s could not say whether %s is still admitted here.", s.ID, s.Key.Platform, who))
	case !admitted:
		r.logger.Warn("schedule removed: its author is no longer admitted", "schedule", s.ID, "user", s.From)
		r.convs.RemoveSchedule(s.ID)
		r.reply(a, to, fmt.Sprintf("⏰ Schedule #%d was not sent, and is removed: %s is no longer admitted here (by the allow-list or a rule of %s, such as a role).", s.ID, who, s.Key.Platform))
	}
	return admitted && err == nil, true
}

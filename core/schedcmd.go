package core

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
)

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

// cmdStartNow answers /<plugin> now N, a continuation's Start with <plugin>
// now: the refused message of schedule N goes at once to a new
// conversation of that plugin, here, in the same workdir; the schedule
// is removed.
func cmdStartNow(c *call) (string, error) {
	r, a, m, cmd := c.r, c.a, &c.m, c.cmd
	s, err := c.ownSchedule(cmd.Arg)
	if err != nil {
		return "", err
	}
	if s.Limit == "" || s.Prompt == "" {
		return "", Errorf("schedule #%d does not wait for a usage window: /%s start begins a conversation", s.ID, cmd.Plugin)
	}
	conv := c.conv
	if !c.hasConv || s.Key != m.Key {
		return "", Errorf("schedule #%d belongs to another conversation: press its button there", s.ID)
	}
	start := Command{Name: CmdStart, Plugin: cmd.Plugin, Arg: conv.Shown(conv.Workdir) + " --no-worktree"}
	started, err := c.start(start)
	if err != nil {
		return "", err
	}
	c.rewarm()
	r.convs.RemoveSchedule(s.ID)
	r.sched.armSchedules()
	r.reply(a, m.Target(), started)
	conv = c.conv // the conversation started
	msg := *m
	msg.Text = s.Prompt
	r.enqueue(a, queued{m: msg, id: newID(), conv: conv, may: r.permitsOf(msg), done: func() {}}, BusyQueue)
	return "", nil
}

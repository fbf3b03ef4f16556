package core

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"
)

// scheduler fires the schedules (/at, /every, the agent's schedule tool,
// a usage window's continuations) when they are due, each as its
// conversation's turn.
type scheduler struct {
	r *Router
	// mu guards timer, which fires at the earliest schedule.
	mu     sync.Mutex
	timer  Timer
	flight *schedFlight
	// unattended counts each user's unattended turns of the day.
	unattended unattendedTurns
}

// stop stops the timer for good (Router.Shutdown).
func (sch *scheduler) stop() {
	sch.mu.Lock()
	defer sch.mu.Unlock()
	if sch.timer != nil {
		sch.timer.Stop()
	}
}

// armSchedules sets the timer for the earliest schedule, replacing the
// one set before.
func (sch *scheduler) armSchedules() {
	r := sch.r
	r.sched.mu.Lock()
	defer r.sched.mu.Unlock()
	if r.sched.timer != nil {
		r.sched.timer.Stop()
		r.sched.timer = nil
	}
	var next time.Time
	for _, s := range r.convs.Schedules() {
		// A platform not attached yet arms its schedules when it is.
		attached := r.platforms.get(s.Key.Platform) != nil
		if attached && !r.sched.flight.holds(s) && (next.IsZero() || s.Next.Before(next)) {
			next = s.Next
		}
	}
	if next.IsZero() || r.turnCtx.Err() != nil {
		return
	}
	r.sched.timer = r.clock.AfterFunc(max(0, next.Sub(r.clock.Now())), r.sched.runSchedules)
}

// runSchedules sends every schedule that is due, from its author, to a
// platform that is attached; one whose platform is not (yet) waits. A
// schedule missed while the bot was down runs once, and says it is late.
func (sch *scheduler) runSchedules() {
	r := sch.r
	r.sched.flight.run.Lock()
	defer r.sched.flight.run.Unlock()
	now := r.clock.Now()
	for _, s := range r.convs.Schedules() {
		if s.Next.After(now) {
			continue
		}
		a := r.platforms.get(s.Key.Platform)
		if a == nil || r.sched.flight.holds(s) || r.sched.skipBusy(a, s, now) {
			continue
		}
		admitted, byRule := r.sched.admitSchedule(a, s, now)
		if !admitted {
			continue
		}
		r.sched.advanceSchedule(s, now)
		if !sch.stored(s, now) {
			continue
		}
		if sch.unattendedCapped(a, s, now) {
			continue
		}
		m := Message{Key: s.Key, ID: fmt.Sprintf("schedule-%d-%d", s.ID, now.Unix()), From: s.From, UserName: s.UserName,
			Text: s.Text, Allowed: byRule, Done: r.sched.flight.start(s, r.sched.heldBack), origin: s.origin(), depth: s.Depth}
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
	r.sched.armSchedules()
}

// heldBack arms the schedules again once a message that held some back
// (runSchedules) is handled: those are due already, so their timer fires
// at once. Arming rather than running them here keeps every firing on the
// router's clock, and done before the message's turn counts as over: a
// goroutine of its own raced the clock (a test's clock moved on while it
// re-armed left the next firing set a step late) and outlived Wait.
func (sch *scheduler) heldBack() {
	r := sch.r
	if r.turnCtx.Err() == nil {
		r.sched.armSchedules()
	}
}

// skipBusy skips a firing of repeating schedule s, due at now, while its
// previous one still runs or waits, and says so once.
func (sch *scheduler) skipBusy(a *attached, s Schedule, now time.Time) bool {
	r := sch.r
	busy, first := r.sched.flight.busy(s)
	if !busy {
		return false
	}
	r.sched.advanceSchedule(s, now)
	r.logger.Info("schedule skipped: its previous message is still being handled", "schedule", s.ID, "conversation", s.Key.String())
	if first {
		r.reply(a, s.Key.Target(), fmt.Sprintf("⏰ Schedule #%d (%s) was skipped: its previous message still runs or waits for an answer. Later firings are skipped likewise, without a word, until it is done.", s.ID, s.repeats()))
	}
	return true
}

// advanceSchedule moves schedule s, due at now, to its next time, or
// removes it when it ran once.
func (sch *scheduler) advanceSchedule(s Schedule, now time.Time) {
	r := sch.r
	if next, ok := s.after(now, r.cfg.ParseCron); ok {
		r.convs.setScheduleNext(s.ID, next)
	} else {
		r.convs.RemoveSchedule(s.ID)
	}
}

// storeRetry is how long a due schedule whose next time could not be
// stored waits before it tries again.
const storeRetry = 30 * time.Second

// stored stores schedule s's next time (StoreSchedules) before s, due at
// now, is sent: a process that takes over from this one must not send it
// again. When that fails s is not sent: it is put back, due again
// storeRetry later.
func (sch *scheduler) stored(s Schedule, now time.Time) bool {
	r := sch.r
	if r.cfg.StoreSchedules == nil {
		return true
	}
	err := r.cfg.StoreSchedules()
	if err == nil {
		return true
	}
	r.logger.Error("schedule not sent: its next time could not be stored", "schedule", s.ID, "conversation", s.Key.String(), "retry_in", storeRetry, "err", err)
	s.Next = now.Add(storeRetry)
	r.convs.putSchedule(s)
	return false
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
func (sch *scheduler) admitSchedule(a *attached, s Schedule, now time.Time) (admitted, byRule bool) {
	r := sch.r
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
		r.sched.advanceSchedule(s, now)
		r.reply(a, to, fmt.Sprintf("⏰ Schedule #%d was not sent this time: %s could not say whether %s is still admitted here.", s.ID, s.Key.Platform, who))
	case !admitted:
		r.logger.Warn("schedule removed: its author is no longer admitted", "schedule", s.ID, "user", s.From)
		r.convs.RemoveSchedule(s.ID)
		r.reply(a, to, fmt.Sprintf("⏰ Schedule #%d was not sent, and is removed: %s is no longer admitted here (by the allow-list or a rule of %s, such as a role).", s.ID, who, s.Key.Platform))
	}
	return admitted && err == nil, true
}

package core

import (
	"cmp"
	"fmt"
	"sync"
	"time"
)

// unattendedTurns counts each user's unattended turns (Message.Unattended:
// schedules, the agent's schedules, continuations) on the UTC day, to
// bound them (RouterConfig.UnattendedTurnsPerDay; issue 41, Medium 6). It
// is kept in memory: a restart starts the count again. Safe for
// concurrent use.
type unattendedTurns struct {
	mu   sync.Mutex
	day  string
	n    map[string]int
	told map[string]bool
}

// take counts one more unattended turn of user at now, unless the user
// has had limit today (limit 0: no cap). told says whether the chat was
// told of the cap already today: it is told once a day.
func (u *unattendedTurns) take(user string, now time.Time, limit int) (ok, told bool) {
	if limit <= 0 {
		return true, false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if day := now.UTC().Format(time.DateOnly); day != u.day {
		u.day, u.n, u.told = day, map[string]int{}, map[string]bool{}
	}
	if u.n[user] >= limit {
		told = u.told[user]
		u.told[user] = true
		return false, told
	}
	u.n[user]++
	return true, false
}

// unattendedCapped reports whether schedule s, due at now, may not run
// because its author has had the day's unattended turns, and says so
// in the chat once a day.
func (sch *scheduler) unattendedCapped(a *attached, s Schedule, now time.Time) bool {
	r := sch.r
	limit := r.cfg.UnattendedTurnsPerDay
	ok, told := sch.unattended.take(s.From, now, limit)
	if ok {
		return false
	}
	r.logger.Info("schedule not run: its author had the day's unattended turns", "schedule", s.ID, "conversation", s.Key.String(), "user", s.From, "limit", limit)
	if !told {
		midnight := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		r.reply(a, s.Key.Target(), fmt.Sprintf("⏰ Schedule #%d (%s) was not run: %s had %d turns today that nobody started by writing (schedules, the agent's schedules, continuations), the most a day may have (UNATTENDED_TURNS_PER_DAY). Such turns run again from %s, in %s; until then they are skipped without a word.",
			s.ID, s.repeats(), cmp.Or(s.UserName, s.From), limit, midnight.Format("2006-01-02 15:04 MST"), roundUp(midnight.Sub(now))))
	}
	return true
}

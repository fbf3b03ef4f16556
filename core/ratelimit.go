package core

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is how many messages one user may send per period. The zero Rate
// means no limit.
type Rate struct {
	N   int
	Per time.Duration
}

// ParseRate parses "N/s", "N/m" or "N/h" (also "N/second", "N/minute",
// "N/hour"). An empty string or "off" is the zero Rate.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" || s == "0" {
		return Rate{}, nil
	}
	num, unit, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if !ok || err != nil || n <= 0 || n > 1_000_000 {
		return Rate{}, fmt.Errorf("rate %q: want N/s, N/m or N/h with N a positive number, e.g. 10/m", s)
	}
	var per time.Duration
	switch strings.ToLower(strings.TrimSpace(unit)) {
	case "s", "sec", "second":
		per = time.Second
	case "m", "min", "minute":
		per = time.Minute
	case "h", "hour":
		per = time.Hour
	default:
		return Rate{}, fmt.Errorf("rate %q: unit must be s, m or h", s)
	}
	return Rate{N: n, Per: per}, nil
}

func (r Rate) String() string {
	if r.N == 0 {
		return "off"
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[r.Per]
	if unit == "" {
		return fmt.Sprintf("%d/%s", r.N, r.Per)
	}
	return fmt.Sprintf("%d/%s", r.N, unit)
}

// userLimits holds one token bucket per (platform, user): a user may send
// a burst of N messages, then one every Per/N. It is safe for concurrent
// use.
type userLimits struct {
	rate  Rate
	mu    sync.Mutex
	users map[[2]string]*rate.Limiter
}

// pruneAt is the map size at which full (idle) buckets are dropped, so a
// flood of distinct users cannot grow the map without bound.
const pruneAt = 4096

func newUserLimits(r Rate) *userLimits {
	return &userLimits{rate: r, users: make(map[[2]string]*rate.Limiter)}
}

// take spends one message of user's allowance at now. When none is left it
// returns how long until the next one and spends nothing.
func (l *userLimits) take(platform, user string, now time.Time) time.Duration {
	if l == nil || l.rate.N == 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]string{platform, user}
	lim, ok := l.users[k]
	if !ok {
		if len(l.users) >= pruneAt {
			l.prune(now)
		}
		lim = rate.NewLimiter(rate.Every(l.rate.Per/time.Duration(l.rate.N)), l.rate.N)
		l.users[k] = lim
	}
	return delay(lim, now)
}

// prune forgets users whose bucket has refilled: a new bucket for them
// would be the same.
func (l *userLimits) prune(now time.Time) {
	for k, lim := range l.users {
		if lim.TokensAt(now) >= float64(l.rate.N) {
			delete(l.users, k)
		}
	}
}

// delay returns how long until lim allows one event at now, taking the
// token when it is available.
func delay(lim *rate.Limiter, now time.Time) time.Duration {
	if lim == nil {
		return 0
	}
	res := lim.ReserveN(now, 1)
	d := res.DelayFrom(now)
	if d > 0 {
		res.CancelAt(now)
		// The limiter counts tokens in floating point and can name a
		// time a nanosecond early: waiting to the next whole millisecond
		// keeps two writes from ever landing inside the limit.
		d = (d + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	return d
}

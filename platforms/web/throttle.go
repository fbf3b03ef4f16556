package web

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Wrong sign-ins are counted per client address in windows of
// loginWindow: past loginFailures in one, the address gets 429 until the
// window ends, and only a window's first failure is logged, so that
// nobody can flood the log or try tokens at the network's speed.
const (
	loginWindow   = time.Minute
	loginFailures = 5
	// maxLoginAddrs bounds the addresses remembered; past it, those whose
	// window ended go first, then any.
	maxLoginAddrs = 4096
)

// loginThrottle counts wrong sign-ins by client address.
type loginThrottle struct {
	mu sync.Mutex
	by map[string]*loginTries
}

type loginTries struct {
	start    time.Time
	failures int
}

func newLoginThrottle() *loginThrottle { return &loginThrottle{by: map[string]*loginTries{}} }

// blocked reports whether addr has had its failures this window, and
// when the window ends.
func (l *loginThrottle) blocked(addr string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.by[addr]
	if e == nil || now.Sub(e.start) >= loginWindow || e.failures < loginFailures {
		return 0, false
	}
	return e.start.Add(loginWindow).Sub(now), true
}

// fail counts a wrong sign-in from addr. It reports whether it is the
// window's first, to be logged, and how many the window before had.
func (l *loginThrottle) fail(addr string, now time.Time) (first bool, before int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.by[addr]
	if e != nil && now.Sub(e.start) < loginWindow {
		e.failures++
		return false, 0
	}
	if e != nil {
		before = e.failures
	} else {
		l.makeRoom(now)
	}
	l.by[addr] = &loginTries{start: now, failures: 1}
	return true, before
}

// succeed forgets addr's failures.
func (l *loginThrottle) succeed(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.by, addr)
}

func (l *loginThrottle) makeRoom(now time.Time) {
	if len(l.by) < maxLoginAddrs {
		return
	}
	for addr, e := range l.by {
		if now.Sub(e.start) >= loginWindow {
			delete(l.by, addr)
		}
	}
	for addr := range l.by {
		if len(l.by) < maxLoginAddrs {
			return
		}
		delete(l.by, addr)
	}
}

// clientAddr is who r comes from, for the throttle: its IP address, or
// for IPv6 its /64 (one host commonly holds a whole /64). Forwarded
// headers are not trusted: behind a reverse proxy every browser is the
// proxy's address.
func clientAddr(r string) string {
	host, _, err := net.SplitHostPort(r)
	if err != nil {
		host = r
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}

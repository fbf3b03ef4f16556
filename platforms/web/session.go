package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

// cookieName is the session cookie's name.
const cookieName = "jakebot_session"

// SessionTTL is how long a sign-in lasts.
const SessionTTL = 30 * 24 * time.Hour

// SignIns keeps sign-ins beyond this process (Options.SignIns; NATS with
// NATS_URL), so that a gateway taking over from another accepts the
// browsers signed in there.
type SignIns interface {
	// PutSignIn keeps sign-in id, with its CSRF token, until expires.
	PutSignIn(ctx context.Context, id, csrf string, expires time.Time) error
	// SignIn returns sign-in id's CSRF token and expiry; ok is false
	// when there is none.
	SignIn(ctx context.Context, id string) (csrf string, expires time.Time, ok bool, err error)
}

// maxSessions bounds the sign-ins kept; the oldest goes first.
const maxSessions = 64

// session is one signed-in browser.
type session struct {
	csrf    string
	expires time.Time
}

// sessions are the signed-in browsers, by the secret their cookie holds.
// They live in memory and, with shared, beyond it too; without, sign in
// again after a restart.
type sessions struct {
	shared SignIns
	mu     sync.Mutex
	byID   map[string]session
	order  []string
}

func newSessions(shared SignIns) *sessions {
	return &sessions{shared: shared, byID: map[string]session{}}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand's contract since Go 1.24)
	return hex.EncodeToString(b)
}

// start signs a browser in and returns its session id. An error is
// shared's: the browser is signed in on this gateway only.
func (s *sessions) start(ctx context.Context, now time.Time) (string, session, error) {
	id := randomHex(32)
	ses := session{csrf: randomHex(32), expires: now.Add(SessionTTL)}
	s.keep(id, ses)
	var err error
	if s.shared != nil {
		err = s.shared.PutSignIn(ctx, id, ses.csrf, ses.expires)
	}
	return id, ses, err
}

func (s *sessions) keep(id string, ses session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[id] = ses
	s.order = append(s.order, id)
	if len(s.order) > maxSessions {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
}

// of returns the session r's cookie names, if it is valid.
func (s *sessions) of(r *http.Request, now time.Time) (session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return session{}, false
	}
	s.mu.Lock()
	ses, ok := s.byID[c.Value]
	s.mu.Unlock()
	if !ok && s.shared != nil {
		// Signed in on another gateway, or on this one before a restart.
		csrf, expires, found, err := s.shared.SignIn(r.Context(), c.Value)
		if err != nil || !found {
			return session{}, false
		}
		ses, ok = session{csrf: csrf, expires: expires}, true
		s.keep(c.Value, ses)
	}
	if !ok || now.After(ses.expires) {
		return session{}, false
	}
	return ses, true
}

// same compares two secrets in constant time.
func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

// cookieName is the session cookie's name.
const cookieName = "jakebot_session"

// sessionTTL is how long a sign-in lasts.
const sessionTTL = 30 * 24 * time.Hour

// maxSessions bounds the sign-ins kept; the oldest goes first.
const maxSessions = 64

// session is one signed-in browser.
type session struct {
	csrf    string
	expires time.Time
}

// sessions are the signed-in browsers, by the secret their cookie holds.
// They live in memory: after a restart, sign in again.
type sessions struct {
	mu    sync.Mutex
	byID  map[string]session
	order []string
}

func newSessions() *sessions { return &sessions{byID: map[string]session{}} }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand's contract since Go 1.24)
	return hex.EncodeToString(b)
}

// start signs a browser in and returns its session id.
func (s *sessions) start(now time.Time) (string, session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := randomHex(32)
	ses := session{csrf: randomHex(32), expires: now.Add(sessionTTL)}
	s.byID[id] = ses
	s.order = append(s.order, id)
	if len(s.order) > maxSessions {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
	return id, ses
}

// of returns the session r's cookie names, if it is valid.
func (s *sessions) of(r *http.Request, now time.Time) (session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return session{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ses, ok := s.byID[c.Value]
	if !ok || now.After(ses.expires) {
		return session{}, false
	}
	return ses, true
}

// same compares two secrets in constant time.
func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

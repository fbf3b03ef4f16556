package mattermosttest

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// keep is how many sent events a session keeps for a client that
// reconnects (the server's dead queue).
const keep = 128

// conn is one WebSocket connection; gorilla allows one writer at a time.
type conn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (c *conn) write(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.ws.WriteJSON(v)
}

// session is a client's stream of events, which outlives a connection
// (reliable WebSockets): events sent while the client is away are kept,
// numbered on, and a client that reconnects with the session's
// connection_id and the sequence_number it expects next gets them, with
// no hello.
type session struct {
	id   string
	seq  int64
	sent []map[string]any // the last keep events, in order
	conn *conn            // nil while the client is away
}

// eventLocked numbers an event, keeps it and sends it if the client is
// there; s.mu is held.
func (s *session) eventLocked(name string, data map[string]any, channel string) {
	ev := map[string]any{"event": name, "data": data, "seq": s.seq,
		"broadcast": map[string]any{"omit_users": nil, "user_id": "", "channel_id": channel, "team_id": ""}}
	s.seq++
	s.sent = append(s.sent, ev)
	if len(s.sent) > keep {
		s.sent = s.sent[len(s.sent)-keep:]
	}
	if s.conn != nil {
		_ = s.conn.write(ev)
	}
}

// resumeFrom returns the kept events from seq on, or false when they are
// not all kept.
func (s *session) resumeFrom(seq int64) ([]map[string]any, bool) {
	first := s.seq - int64(len(s.sent))
	if seq < first || seq > s.seq {
		return nil, false
	}
	return slices.Clone(s.sent[seq-first:]), true
}

// serveSocket is the event stream: the client authenticates with its
// first message (authentication_challenge); a wrong token is answered
// FAIL and the connection closed. A new session is greeted with hello
// (seq 0, its connection_id) before the OK, as the server does; a session
// resumed gets the OK, then the events it missed.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	c := &conn{ws: ws}
	var auth struct {
		Seq    int64  `json:"seq"`
		Action string `json:"action"`
		Data   struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if ws.ReadJSON(&auth) != nil {
		return
	}
	_ = ws.SetReadDeadline(time.Time{})
	if auth.Action != "authentication_challenge" || auth.Data.Token != Token {
		_ = c.write(map[string]any{"status": "FAIL", "seq_reply": auth.Seq,
			"error": map[string]any{"id": "api.web_socket_router.not_authenticated.app_error", "message": "Not authenticated."}})
		return
	}
	var sess *session
	s.update(func() {
		s.connects++
		seq, err := strconv.ParseInt(r.URL.Query().Get("sequence_number"), 10, 64)
		if old, ok := s.sessions[r.URL.Query().Get("connection_id")]; ok && err == nil && old.conn == nil {
			if missed, ok := old.resumeFrom(seq); ok {
				sess = old
				_ = c.write(map[string]any{"status": "OK", "seq_reply": auth.Seq})
				for _, ev := range missed {
					_ = c.write(ev)
				}
				s.resumes++
			}
		}
		if sess == nil {
			sess = &session{id: s.nextID('w')}
			s.sessions[sess.id] = sess
			sess.conn = c
			sess.eventLocked("hello", map[string]any{"connection_id": sess.id, "server_version": "10.11.0.fake"}, "")
			_ = c.write(map[string]any{"status": "OK", "seq_reply": auth.Seq})
		}
		sess.conn = c
	})
	for {
		var req map[string]any
		if err := ws.ReadJSON(&req); err != nil {
			break
		}
	}
	s.update(func() {
		if sess.conn == c {
			sess.conn = nil
		}
	})
}

// broadcastLocked sends an event to every session, connected or away;
// s.mu is held.
func (s *Server) broadcastLocked(name string, data map[string]any, channel string) {
	for _, sess := range s.sessions {
		sess.eventLocked(name, data, channel)
	}
}

func (s *Server) connected() bool {
	for _, sess := range s.sessions {
		if sess.conn != nil {
			return true
		}
	}
	return false
}

// WaitConnected waits until the bot has an authenticated connection.
func (s *Server) WaitConnected(t testing.TB) {
	t.Helper()
	s.WaitFor(t, "an authenticated websocket", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.connected()
	})
}

// Connects returns how many connections the bot authenticated, and how
// many of them resumed a session.
func (s *Server) Connects() (connects, resumes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects, s.resumes
}

// Disconnect closes the bot's connections, as a network failure does:
// events go on being kept for it.
func (s *Server) Disconnect() {
	s.mu.Lock()
	var conns []*conn
	for _, sess := range s.sessions {
		if sess.conn != nil {
			conns = append(conns, sess.conn)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
}

// Restart closes the bot's connections and forgets their sessions, as a
// server restart does: a client cannot resume, and what was said
// meanwhile is lost to it.
func (s *Server) Restart() {
	s.Disconnect()
	s.update(func() { s.sessions = map[string]*session{} })
}

package mattermosttest

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// conn is one WebSocket connection; gorilla allows one writer at a time.
type conn struct {
	ws  *websocket.Conn
	mu  sync.Mutex
	seq int64
}

func (c *conn) write(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.ws.WriteJSON(v)
}

// event writes an event with the connection's next sequence number.
func (c *conn) event(name string, data map[string]any, channel string) {
	c.mu.Lock()
	seq := c.seq
	c.seq++
	c.mu.Unlock()
	_ = c.write(map[string]any{"event": name, "data": data, "seq": seq,
		"broadcast": map[string]any{"omit_users": nil, "user_id": "", "channel_id": channel, "team_id": ""}})
}

// serveSocket is the event stream: the client authenticates with its
// first message (authentication_challenge), is answered OK and greeted
// with hello, then gets every event; a wrong token is answered FAIL and
// the connection closed.
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
	if c.write(map[string]any{"status": "OK", "seq_reply": auth.Seq}) != nil {
		return
	}
	s.update(func() {
		s.connects++
		c.event("hello", map[string]any{"connection_id": s.nextID('w'), "server_version": "10.11.0.fake"}, "")
		s.conns = append(s.conns, c)
	})
	for {
		var req map[string]any
		if err := ws.ReadJSON(&req); err != nil {
			break
		}
	}
	s.update(func() { s.conns = slices.DeleteFunc(s.conns, func(x *conn) bool { return x == c }) })
}

// broadcastLocked sends an event to every authenticated connection; s.mu
// is held.
func (s *Server) broadcastLocked(name string, data map[string]any, channel string) {
	for _, c := range s.conns {
		c.event(name, data, channel)
	}
}

// WaitConnected waits until the bot has an authenticated connection.
func (s *Server) WaitConnected(t testing.TB) {
	t.Helper()
	s.WaitFor(t, "an authenticated websocket", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.conns) > 0
	})
}

// Connects returns how many connections the bot authenticated.
func (s *Server) Connects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects
}

// Disconnect closes the bot's connections, as a server restart does.
func (s *Server) Disconnect() {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
}

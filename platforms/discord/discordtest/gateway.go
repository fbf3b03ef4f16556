package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/gorilla/websocket"
)

// Gateway opcodes (https://discord.com/developers/docs/topics/opcodes-and-status-codes).
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

// frame is one gateway payload.
type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

// gateway is the fake's gateway state. mu orders sequence numbers and
// writes, so events reach the client in sequence; it is taken before the
// Server's mu, never after.
type gateway struct {
	mu      sync.Mutex
	conn    *conn
	session string
	seq     int64
	log     []frame
	replay  int
	// disallowed intents make IDENTIFY fail with 4014.
	disallowed int

	// Guarded by Server.mu.
	stats GatewayStats
}

// GatewayStats is what the gateway has seen from the client.
type GatewayStats struct {
	// Identifies holds the d payload of every IDENTIFY (token, intents).
	Identifies []json.RawMessage
	Resumes    int
	Heartbeats int
	// Connected is true while a client session is live.
	Connected bool
}

type conn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

// close ends the connection with a gateway close code.
func (c *conn) close(code int, text string) {
	c.mu.Lock()
	_ = c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, text))
	c.mu.Unlock()
	c.ws.Close()
}

func (c *conn) send(f frame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteJSON(f)
}

// Gateway returns what the gateway has seen so far.
func (d *Server) Gateway() GatewayStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.gw.stats
	s.Identifies = slices.Clone(s.Identifies)
	return s
}

func (d *Server) updateStats(f func(*GatewayStats)) {
	d.mu.Lock()
	f(&d.gw.stats)
	d.notify()
	d.mu.Unlock()
}

func (d *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := d.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	defer d.drop(c)
	hello, _ := json.Marshal(map[string]int64{"heartbeat_interval": d.HeartbeatInterval.Milliseconds()})
	if c.send(frame{Op: opHello, D: hello}) != nil {
		return
	}
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f frame
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		switch f.Op {
		case opHeartbeat:
			d.updateStats(func(s *GatewayStats) { s.Heartbeats++ })
			_ = c.send(frame{Op: opHeartbeatACK})
		case opIdentify:
			d.identify(c, f.D)
		case opResume:
			d.resume(c, f.D)
		}
	}
}

func (d *Server) drop(c *conn) {
	d.gw.mu.Lock()
	if d.gw.conn == c {
		d.gw.conn = nil
		d.updateStats(func(s *GatewayStats) { s.Connected = false })
	}
	d.gw.mu.Unlock()
	c.ws.Close()
}

func (d *Server) identify(c *conn, payload json.RawMessage) {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	_ = json.Unmarshal(payload, &id)
	d.updateStats(func(s *GatewayStats) { s.Identifies = append(s.Identifies, payload) })
	switch {
	case id.Token != d.Token && id.Token != "Bot "+d.Token:
		c.close(4004, "Authentication failed.")
		return
	case id.Intents&d.disallowed() != 0:
		c.close(4014, "Disallowed intent(s).")
		return
	}
	d.gw.mu.Lock()
	defer d.gw.mu.Unlock()
	d.gw.session = fmt.Sprintf("fake-session-%d", len(d.Gateway().Identifies))
	d.gw.conn = c
	d.updateStats(func(s *GatewayStats) { s.Connected = true })
	d.dispatchLocked("READY", map[string]any{
		"v": 9, "session_id": d.gw.session, "user": d.botUser(),
		"resume_gateway_url": d.gatewayURL(),
		"application":        map[string]any{"id": d.AppID, "flags": 0},
		"guilds":             []any{map[string]any{"id": d.GuildID, "unavailable": true}},
		"private_channels":   []any{},
	})
}

// resume replays the events the client missed, then RESUMED, as Discord
// does; ReplayOnResume adds events it had already seen.
func (d *Server) resume(c *conn, payload json.RawMessage) {
	var r struct {
		Session string `json:"session_id"`
		Seq     int64  `json:"seq"`
	}
	_ = json.Unmarshal(payload, &r)
	d.gw.mu.Lock()
	defer d.gw.mu.Unlock()
	if r.Session != d.gw.session {
		_ = c.send(frame{Op: opInvalidSession, D: json.RawMessage("false")})
		return
	}
	d.gw.conn = c
	d.updateStats(func(s *GatewayStats) { s.Resumes++; s.Connected = true })
	from := len(d.gw.log)
	for i, f := range d.gw.log {
		if *f.S > r.Seq {
			from = i
			break
		}
	}
	from = max(1, from-d.gw.replay) // never READY again
	d.gw.replay = 0
	for _, f := range d.gw.log[from:] {
		if c.send(f) != nil {
			return
		}
	}
	d.dispatchLocked("RESUMED", map[string]any{})
}

// Dispatch sends an event (op 0) with the next sequence number to the
// connected client, or keeps it for the client's RESUME when none is
// connected. It returns the sequence number.
func (d *Server) Dispatch(event string, data any) int64 {
	d.gw.mu.Lock()
	defer d.gw.mu.Unlock()
	return d.dispatchLocked(event, data)
}

func (d *Server) dispatchLocked(event string, data any) int64 {
	raw, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("fake discord: event %s: %v", event, err))
	}
	d.gw.seq++
	seq := d.gw.seq
	f := frame{Op: opDispatch, D: raw, S: &seq, T: &event}
	d.gw.log = append(d.gw.log, f)
	if d.gw.conn != nil {
		_ = d.gw.conn.send(f)
	}
	return seq
}

// Disconnect drops the client's gateway connection without a close
// frame, as a network failure would. discordgo reconnects and resumes.
func (d *Server) Disconnect() {
	d.gw.mu.Lock()
	c := d.gw.conn
	d.gw.conn = nil
	d.gw.mu.Unlock()
	if c != nil {
		d.updateStats(func(s *GatewayStats) { s.Connected = false })
		c.ws.Close()
	}
}

// DisallowIntents makes IDENTIFY fail with close code 4014 when it asks
// for any intent in mask, as Discord does for privileged intents the
// application has not enabled (Message Content is 1<<15).
func (d *Server) DisallowIntents(mask int) {
	d.gw.mu.Lock()
	d.gw.disallowed = mask
	d.gw.mu.Unlock()
}

func (d *Server) disallowed() int {
	d.gw.mu.Lock()
	defer d.gw.mu.Unlock()
	return d.gw.disallowed
}

// ReplayOnResume makes the next RESUME also replay the last n events the
// client had already received, as Discord may after a reconnect.
func (d *Server) ReplayOnResume(n int) {
	d.gw.mu.Lock()
	d.gw.replay = n
	d.gw.mu.Unlock()
}

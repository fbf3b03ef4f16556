package slacktest

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// conn is one Socket Mode connection; gorilla allows one writer at a
// time.
type conn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (c *conn) write(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteJSON(v)
}

// keepAlive is how often the fake pings an idle connection, as Slack does;
// slack-go reconnects when pings stop for 30 s.
const keepAlive = 5 * time.Second

// serveSocket is the Socket Mode websocket: hello, then envelopes the test
// sends, acknowledgements read back, pings.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	ws.SetPongHandler(func(string) error {
		s.update(func() { s.pongs++ })
		return nil
	})
	s.update(func() { s.connections++ })
	hello := map[string]any{"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "fake-slack", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": AppID}}
	if err := c.write(hello); err != nil {
		return
	}
	_ = ws.WriteControl(websocket.PingMessage, []byte("hello"), time.Now().Add(time.Second))
	var lost error
	s.update(func() {
		s.conn = c
		if s.redeliver {
			lost = s.redeliverLocked()
		}
	})
	if lost != nil {
		return
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = ws.WriteControl(websocket.PingMessage, []byte("keepalive"), time.Now().Add(time.Second))
			case <-stop:
				return
			}
		}
	}()
	for {
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if err := ws.ReadJSON(&ack); err != nil {
			break
		}
		s.update(func() { s.acks = append(s.acks, ack.EnvelopeID) })
	}
	s.update(func() {
		if s.conn == c {
			s.conn = nil
		}
	})
}

// WaitConnected waits until the bot has a Socket Mode connection open and
// has been greeted.
func (s *Server) WaitConnected(t testing.TB) {
	t.Helper()
	s.waitLocked(t, "a socket mode connection", func() bool { return s.conn != nil })
}

// connected waits for a connection and returns it, with how many
// connections the bot opened and how many pongs it sent so far.
func (s *Server) connected(t testing.TB) (c *conn, connections, pongs int) {
	t.Helper()
	s.WaitConnected(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn, s.connections, s.pongs
}

// waitLocked is WaitFor with cond checked under the fake's lock.
func (s *Server) waitLocked(t testing.TB, what string, cond func() bool) {
	t.Helper()
	s.WaitFor(t, what, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return cond()
	})
}

// waitReconnect waits until the bot has opened a connection other than
// c, its connection number n.
func (s *Server) waitReconnect(t testing.TB, c *conn, n int) {
	t.Helper()
	s.waitLocked(t, "the bot to reconnect", func() bool { return s.connections > n && s.conn != nil && s.conn != c })
}

// Ping pings the bot over the socket and waits for its pong.
func (s *Server) Ping(t testing.TB) {
	t.Helper()
	c, _, before := s.connected(t)
	if err := c.ws.WriteControl(websocket.PingMessage, []byte("test"), time.Now().Add(time.Second)); err != nil {
		t.Fatalf("fake slack: ping: %v", err)
	}
	s.waitLocked(t, "a pong", func() bool { return s.pongs > before })
}

// Disconnect asks the bot to reconnect, as Slack does before it retires a
// connection, and waits until it has.
func (s *Server) Disconnect(t testing.TB) {
	t.Helper()
	c, n, _ := s.connected(t)
	msg := map[string]any{"type": "disconnect", "reason": "refresh_requested",
		"debug_info": map[string]any{"host": "fake-slack"}}
	if err := c.write(msg); err != nil {
		t.Fatalf("fake slack: disconnect: %v", err)
	}
	s.waitReconnect(t, c, n)
	c.ws.Close()
}

// Drop closes the bot's connection without warning, as a network failure
// would, and waits until it has reconnected.
func (s *Server) Drop(t testing.TB) {
	t.Helper()
	c, n, _ := s.connected(t)
	c.ws.Close()
	s.waitReconnect(t, c, n)
}

// send writes an envelope to the current connection, remembering it for
// Redeliver. It waits for a connection. With RedeliverUnacked on, a
// connection that closes as the envelope goes (the bot killed, the network
// dropped) is no failure: as on Slack, the envelope comes again on the
// bot's next connection.
func (s *Server) send(t testing.TB, env map[string]any) string {
	t.Helper()
	s.WaitConnected(t)
	var err error
	redeliver := false
	s.update(func() { err, redeliver = s.sendLocked(env), s.redeliver })
	if err != nil && !redeliver {
		t.Fatalf("fake slack: send envelope: %v", err)
	}
	return env["envelope_id"].(string)
}

// redeliverLocked sends the envelopes not acknowledged again, each at
// most 3 times; s.mu is held.
func (s *Server) redeliverLocked() error {
	acked := make(map[string]bool, len(s.acks))
	for _, a := range s.acks {
		acked[a] = true
	}
	for _, id := range s.sentOrder {
		env := s.envelopes[id]
		attempt, _ := env["retry_attempt"].(int)
		if acked[id] || attempt >= 3 {
			continue
		}
		env = maps.Clone(env)
		env["retry_attempt"], env["retry_reason"] = attempt+1, "timeout"
		if err := s.sendLocked(env); err != nil {
			return err
		}
	}
	return nil
}

// sendLocked writes env; s.mu is held.
func (s *Server) sendLocked(env map[string]any) error {
	id := env["envelope_id"].(string)
	if _, ok := s.envelopes[id]; !ok {
		s.sentOrder = append(s.sentOrder, id)
	}
	s.envelopes[id] = env
	if s.conn == nil {
		return fmt.Errorf("no connection for envelope %s", id)
	}
	return s.conn.write(env)
}

// Redeliver sends envelope id again with the next retry_attempt, as Slack
// does when an acknowledgement is late: with the same envelope id, or with
// a new one (the event and trigger ids inside stay the same). It returns
// the id it sent.
func (s *Server) Redeliver(t testing.TB, id string, newEnvelope bool) string {
	t.Helper()
	s.mu.Lock()
	env := maps.Clone(s.envelopes[id])
	if newEnvelope && env != nil {
		s.seq++
		env["envelope_id"] = fmt.Sprintf("%s-retry-%d", id, s.seq)
	}
	s.mu.Unlock()
	if env == nil {
		t.Fatalf("fake slack: no envelope %s to redeliver", id)
	}
	attempt, _ := env["retry_attempt"].(int)
	env["retry_attempt"], env["retry_reason"] = attempt+1, "timeout"
	return s.send(t, env)
}

// nextSeq numbers an envelope the fake sends.
func (s *Server) nextSeq() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// SlashCommand sends a slash command ("/claude", "start ~/x") typed by
// user in channel, and returns its envelope id.
func (s *Server) SlashCommand(t testing.TB, user, channel, command, text string) string {
	t.Helper()
	n := s.nextSeq()
	return s.send(t, map[string]any{
		"envelope_id": fmt.Sprintf("env-slash-%d", n), "type": "slash_commands",
		"accepts_response_payload": true, "retry_attempt": 0, "retry_reason": "",
		"payload": map[string]any{
			"token": "verification", "team_id": Team, "team_domain": "fake", "api_app_id": AppID,
			"channel_id": channel, "channel_name": channelName(channel), "user_id": user, "user_name": strings.ToLower(user),
			"command": command, "text": text, "is_enterprise_install": "false",
			"response_url": fmt.Sprintf("https://hooks.slack.test/commands/%d", n), "trigger_id": fmt.Sprintf("trigger-%d", n),
		},
	})
}

// PressButton sends the block_actions interaction Slack sends when user
// presses the button with actionID and value on message m.
func (s *Server) PressButton(t testing.TB, user string, m Message, actionID, value string) string {
	t.Helper()
	n := s.nextSeq()
	return s.send(t, map[string]any{
		"envelope_id": fmt.Sprintf("env-press-%d", n), "type": "interactive", "accepts_response_payload": false,
		"payload": map[string]any{
			"type": "block_actions", "api_app_id": AppID, "token": "verification",
			"user": map[string]any{"id": user, "username": strings.ToLower(user), "name": strings.ToLower(user), "team_id": Team},
			"team": map[string]any{"id": Team, "domain": "fake"},
			"container": map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel,
				"is_ephemeral": false, "thread_ts": m.ThreadTS},
			"channel":      map[string]any{"id": m.Channel, "name": channelName(m.Channel)},
			"message":      map[string]any{"type": "message", "user": m.User, "ts": m.TS, "thread_ts": m.ThreadTS, "text": m.Text},
			"trigger_id":   fmt.Sprintf("trigger-press-%d", n),
			"response_url": fmt.Sprintf("https://hooks.slack.test/actions/%d", n),
			"actions": []any{map[string]any{"type": "button", "action_id": actionID, "block_id": "b1", "value": value,
				"action_ts": "1700000000.000001", "text": map[string]any{"type": "plain_text", "text": "button"}}},
		},
	})
}

// Posted is a message a user posted in the fake workspace.
type Posted struct {
	TS string
	// Envelopes are the ids of the events Slack sent about it: a message
	// event, and an app_mention event first when it mentions the bot.
	Envelopes []string
}

// Post posts a message from user in channel (in thread, unless it is "")
// and sends the events Slack would: app_mention when text mentions the bot
// (write <@UBOT>) outside a DM, and the message event (message.im,
// message.channels or message.groups by the channel's first letter).
func (s *Server) Post(t testing.TB, user, channel, thread, text string) Posted {
	t.Helper()
	return s.post(t, user, channel, thread, text, nil)
}

// post posts a message as Post does; with files, both events carry them
// and the message event is a file_share.
func (s *Server) post(t testing.TB, user, channel, thread, text string, files []File) Posted {
	t.Helper()
	var m *Message
	var parent string
	var envs []map[string]any
	s.update(func() {
		m = &Message{Channel: channel, TS: s.nextTS(), ThreadTS: thread, User: user, Text: text}
		s.messages[channel+"/"+m.TS] = m
		s.order = append(s.order, channel+"/"+m.TS)
		if p, ok := s.messages[channel+"/"+thread]; ok {
			parent = p.User
		}
		shared := s.shareLocked(m.TS, files)
		if strings.Contains(text, "<@"+BotUser+">") && !strings.HasPrefix(channel, "D") {
			ev := map[string]any{"type": "app_mention", "user": user, "text": text, "ts": m.TS, "channel": channel, "event_ts": m.TS}
			if thread != "" {
				ev["thread_ts"] = thread
			}
			if shared != nil {
				ev["files"], ev["upload"] = shared, false
			}
			envs = append(envs, s.eventEnvelope(ev))
		}
		ev := s.messageEvent(m, parent)
		if shared != nil {
			ev["subtype"], ev["files"], ev["upload"], ev["display_as_bot"] = "file_share", shared, false, false
		}
		envs = append(envs, s.eventEnvelope(ev))
	})
	p := Posted{TS: m.TS}
	for _, env := range envs {
		p.Envelopes = append(p.Envelopes, s.send(t, env))
	}
	return p
}

// messageEvent is the message event for m; s.mu is held.
func (s *Server) messageEvent(m *Message, parentUser string) map[string]any {
	ev := map[string]any{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS, "channel": m.Channel,
		"event_ts": m.TS, "channel_type": channelType(m.Channel)}
	if m.Bot {
		ev["bot_id"] = BotID
	} else {
		ev["client_msg_id"] = fmt.Sprintf("client-%s", m.TS)
	}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
		ev["parent_user_id"] = parentUser
	}
	return ev
}

// eventEnvelope wraps an Events API event; s.mu is held.
func (s *Server) eventEnvelope(event map[string]any) map[string]any {
	s.seq++
	return map[string]any{
		"envelope_id": fmt.Sprintf("env-event-%d", s.seq), "type": "events_api",
		"accepts_response_payload": false, "retry_attempt": 0, "retry_reason": "",
		"payload": map[string]any{
			"token": "verification", "team_id": Team, "api_app_id": AppID, "type": "event_callback",
			"event_id": fmt.Sprintf("Ev%06d", s.seq), "event_time": 1700000000 + s.seq, "event": event,
			"authorizations": []map[string]any{{"team_id": Team, "user_id": BotUser, "is_bot": true}},
		},
	}
}

func channelType(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case strings.HasPrefix(channel, "G"):
		return "group"
	}
	return "channel"
}

func channelName(channel string) string {
	if strings.HasPrefix(channel, "D") {
		return "directmessage"
	}
	return strings.ToLower(channel)
}

package slacktest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

// Identities and tokens of the fake Slack workspace.
const (
	BotToken = "xoxb-fake-bot-token"
	AppToken = "xapp-fake-app-token"
	BotUser  = "UBOT"
	BotID    = "BBOT"
	Team     = "TFAKE"
	AppID    = "AFAKE"
)

// Server is a fake Slack: the Web API methods a bot adapter calls, over
// HTTP, and the Socket Mode websocket that apps.connections.open points
// to. Messages the bot posts are kept per channel and thread, so a test
// reads what a user would see; every call is recorded. Files users share
// are served at private URLs, and files the bot uploads are kept per
// channel. Tests inject events (slash commands, messages with or without
// files, mentions), redeliver envelopes, disconnect the socket, and make
// the next calls fail with msg_too_long, a 429, a server error or a
// timeout. It is safe for concurrent use.
type Server struct {
	// URL is the Web API's base URL, for SLACK_API_URL; it ends in "/".
	URL string

	srv      *httptest.Server
	upgrader websocket.Upgrader

	mu          sync.Mutex
	changes     fakeserver.Signal
	clock       func() time.Time
	seq         int
	conn        *conn
	connections int
	pongs       int
	calls       []Call
	acks        []string
	envelopes   map[string]map[string]any
	sentOrder   []string // envelope ids in the order first sent
	redeliver   bool
	messages    map[string]*Message // by channel/ts
	order       []string            // keys of messages in posting order
	ephemeral   []Message
	maxText     int
	limited     map[string][]int // method → Retry-After seconds of the next 429s
	failing     map[string][]int // method → HTTP status of the next server errors
	stalls      map[string][]time.Duration
	// Files: shared by users (by id), uploaded by the bot (pending until
	// completed), and every download.
	sharedFiles    map[string]File
	pendingUploads map[string]File
	uploads        []Upload
	downloads      []Download
	echo           bool
	postHooks      []func(Message)
}

// Call is one Web API call the fake answered.
type Call struct {
	Method   string
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	User     string // chat.postEphemeral's recipient
	Name     string // reactions.add's emoji
	// Blocks is the blocks form field (Block Kit JSON), "" when absent.
	Blocks string
	// Error is the error the fake answered with: a Slack error code, or
	// "ratelimited" for a 429.
	Error string
	At    time.Time
}

// Message is a message in the fake workspace.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	User     string
	Text     string
	Bot      bool
	Edits    int
	// Blocks is the message's Block Kit JSON, "" for a text-only one.
	Blocks string
	// Reactions are the emoji the bot added.
	Reactions []string
}

// New starts a fake Slack that stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{
		clock:          time.Now,
		envelopes:      make(map[string]map[string]any),
		messages:       make(map[string]*Message),
		limited:        make(map[string][]int),
		failing:        make(map[string][]int),
		stalls:         make(map[string][]time.Duration),
		sharedFiles:    make(map[string]File),
		pendingUploads: make(map[string]File),
		upgrader:       websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/socket", s.serveSocket)
	mux.HandleFunc("/files-pri/", s.serveFile)
	mux.HandleFunc("/upload/v1/", s.serveUpload)
	mux.HandleFunc("/{$}", s.serveSignIn)
	// Every field is set before the server starts: the handlers read them.
	s.srv = httptest.NewUnstartedServer(mux)
	s.srv.Start()
	s.URL = s.srv.URL + "/api/"
	t.Cleanup(s.Close)
	return s
}

// Close disconnects the bot and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.ws.Close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetClock sets the time recorded with each call, so a test with a fake
// clock can check the spacing of edits.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// SetMaxText makes chat.postMessage and chat.update answer msg_too_long
// for texts of more than n runes; 0 means no limit.
func (s *Server) SetMaxText(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxText = n
}

// RateLimit makes the next times calls of method answer 429 with a
// Retry-After of retryAfter (whole seconds, as Slack sends it).
func (s *Server) RateLimit(method string, retryAfter time.Duration, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range times {
		s.limited[method] = append(s.limited[method], int(retryAfter/time.Second))
	}
}

// FailNext makes the next call of method answer HTTP status (a 5xx: the
// platform failing) without acting on it.
func (s *Server) FailNext(method string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing[method] = append(s.failing[method], status)
}

// StallNext makes the next call of method time out: the fake holds it for
// d without acting on it, then closes the connection.
func (s *Server) StallNext(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalls[method] = append(s.stalls[method], d)
}

// RedeliverUnacked makes each new Socket Mode connection receive again,
// with the next retry_attempt, every envelope the bot has not
// acknowledged, as Slack retries an event whose acknowledgement never
// came (up to 3 times): an event sent on a connection that died is not
// lost.
func (s *Server) RedeliverUnacked(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redeliver = on
}

// EchoBotMessages makes the fake send a message event for every message
// the bot posts, as Slack does in channels the app subscribes to.
func (s *Server) EchoBotMessages(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.echo = on
}

// OnBotPost makes the fake call f with each message the bot posts, once
// it is in the workspace and before the post is answered: what f sends (a
// user's reply in the thread the message starts) reaches the bot before
// it knows the message's timestamp.
func (s *Server) OnBotPost(f func(Message)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.postHooks = append(s.postHooks, f)
}

// update runs f under the lock and wakes every waiter.
func (s *Server) update(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	s.changes.Notify()
}

// Changed returns a channel that is closed at the fake's next change
// (a call, an ack, a connection), for tests that wait on several things.
func (s *Server) Changed() <-chan struct{} { return s.changes.Next() }

// nextTS returns a new, increasing message timestamp.
func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("1700000000.%06d", s.seq)
}

// WaitFor waits until cond holds, re-checking it after every change to the
// fake, and fails the test if it does not hold in time. cond may call the
// fake's accessors.
func (s *Server) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !s.changes.WaitFor(cond) {
		t.Fatalf("fake slack: timed out waiting for %s; calls so far:\n%s", what, s.dump())
	}
}

// WaitCall waits for a call matching match, counting every call since the
// fake started, and returns the first.
func (s *Server) WaitCall(t testing.TB, what string, match func(Call) bool) Call {
	t.Helper()
	var found Call
	s.WaitFor(t, what, func() bool {
		for _, c := range s.Calls() {
			if match(c) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

// WaitAck waits until the bot has acknowledged envelope id.
func (s *Server) WaitAck(t testing.TB, id string) {
	t.Helper()
	s.WaitFor(t, "ack of envelope "+id, func() bool {
		for _, a := range s.Acks() {
			if a == id {
				return true
			}
		}
		return false
	})
}

// Calls returns every Web API call so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Acks returns the envelope ids the bot acknowledged, in order.
func (s *Server) Acks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.acks...)
}

// Connections returns how many Socket Mode connections the bot opened.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections
}

// Replies returns the bot's messages in a thread (or, with thread "",
// at the top level of channel), in posting order, with their current text.
func (s *Server) Replies(channel, thread string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, k := range s.order {
		m := s.messages[k]
		if m.Bot && m.Channel == channel && m.ThreadTS == thread {
			out = append(out, *m)
		}
	}
	return out
}

// Message returns the message at channel and ts.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[channel+"/"+ts]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Ephemeral returns the ephemeral messages the bot sent.
func (s *Server) Ephemeral() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.ephemeral...)
}

func (s *Server) dump() string {
	var b strings.Builder
	for _, c := range s.Calls() {
		fmt.Fprintf(&b, "  %s channel=%s ts=%s thread=%s err=%s text=%q\n", c.Method, c.Channel, c.TS, c.ThreadTS, c.Error, shorten(c.Text))
	}
	fmt.Fprintf(&b, "  acks: %v\n", s.Acks())
	return b.String()
}

func shorten(s string) string {
	if utf8.RuneCountInString(s) > 120 {
		return string([]rune(s)[:120]) + "…"
	}
	return s
}

// serveAPI answers the Web API methods.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = r.PostForm.Get("token")
	}
	want := BotToken
	if method == "apps.connections.open" {
		want = AppToken
	}
	if token != want {
		fakeserver.WriteJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	f := r.PostForm
	call := Call{Method: method, Channel: f.Get("channel"), TS: f.Get("ts"), ThreadTS: f.Get("thread_ts"),
		Text: f.Get("text"), User: f.Get("user"), Name: f.Get("name"), Blocks: f.Get("blocks")}
	if method == "reactions.add" || method == "reactions.remove" {
		call.TS = f.Get("timestamp")
	}
	var resp map[string]any
	var hooks []func(Message)
	var posted Message
	retry, status, stall := -1, 0, time.Duration(-1)
	s.update(func() {
		call.At = s.clock()
		if q := s.stalls[method]; len(q) > 0 {
			stall, s.stalls[method] = q[0], q[1:]
			call.Error = "stalled"
		} else if q := s.failing[method]; len(q) > 0 {
			status, s.failing[method] = q[0], q[1:]
			call.Error = http.StatusText(status)
		} else if q := s.limited[method]; len(q) > 0 {
			retry, s.limited[method] = q[0], q[1:]
			call.Error = "ratelimited"
		} else if resp = s.filesMethod(method, f); resp == nil {
			resp = s.answer(&call)
		}
		s.calls = append(s.calls, call)
		if m, ok := s.messages[call.Channel+"/"+call.TS]; ok && method == "chat.postMessage" && call.Error == "" {
			hooks, posted = s.postHooks, *m
		}
	})
	for _, f := range hooks {
		f(posted)
	}
	switch {
	case stall >= 0:
		fakeserver.Stall(w, r, stall)
		return
	case status != 0:
		http.Error(w, http.StatusText(status), status)
		return
	}
	if retry >= 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	fakeserver.WriteJSON(w, resp)
}

// answer performs call on the workspace; s.mu is held.
func (s *Server) answer(call *Call) map[string]any {
	fail := func(code string) map[string]any {
		call.Error = code
		return map[string]any{"ok": false, "error": code}
	}
	tooLong := s.maxText > 0 && utf8.RuneCountInString(call.Text) > s.maxText
	switch call.Method {
	case "auth.test":
		return map[string]any{"ok": true, "url": "https://fake.slack.test/", "team": "Fake", "user": "jakebot",
			"team_id": Team, "user_id": BotUser, "bot_id": BotID}
	case "apps.connections.open":
		return map[string]any{"ok": true, "url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/socket"}
	case "chat.postMessage":
		switch {
		case call.Text == "":
			return fail("no_text")
		case tooLong:
			return fail("msg_too_long")
		}
		return s.postLocked(call)
	case "chat.update":
		m, ok := s.messages[call.Channel+"/"+call.TS]
		switch {
		case !ok:
			return fail("message_not_found")
		case call.Text == "":
			return fail("no_text")
		case tooLong:
			return fail("msg_too_long")
		}
		m.Text = call.Text
		if call.Blocks != "" {
			m.Blocks = call.Blocks // without the field Slack keeps the blocks
		}
		m.Edits++
		return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text}
	case "chat.postEphemeral":
		s.ephemeral = append(s.ephemeral, Message{Channel: call.Channel, ThreadTS: call.ThreadTS, User: call.User, Text: call.Text, Bot: true})
		return map[string]any{"ok": true, "message_ts": s.nextTS()}
	case "reactions.add", "reactions.remove":
		return s.react(call)
	}
	return fail("unknown_method")
}

// react adds or removes the bot's reaction call names, as Slack does;
// s.mu is held.
func (s *Server) react(call *Call) map[string]any {
	m, ok := s.messages[call.Channel+"/"+call.TS]
	had := ok && slices.Contains(m.Reactions, call.Name)
	switch {
	case !ok:
		call.Error = "message_not_found"
	case call.Method == "reactions.add" && had:
		call.Error = "already_reacted"
	case call.Method == "reactions.add":
		m.Reactions = append(m.Reactions, call.Name)
	case !had:
		call.Error = "no_reaction"
	default:
		m.Reactions = fakeserver.Keep(m.Reactions, func(r string) bool { return r != call.Name })
	}
	if call.Error != "" {
		return map[string]any{"ok": false, "error": call.Error}
	}
	return map[string]any{"ok": true}
}

// postLocked posts the bot's message call describes; s.mu is held.
func (s *Server) postLocked(call *Call) map[string]any {
	m := &Message{Channel: call.Channel, TS: s.nextTS(), ThreadTS: call.ThreadTS, User: BotUser, Text: call.Text, Bot: true,
		Blocks: call.Blocks}
	call.TS = m.TS
	s.messages[m.Channel+"/"+m.TS] = m
	s.order = append(s.order, m.Channel+"/"+m.TS)
	if s.echo {
		s.sendLocked(s.eventEnvelope(s.messageEvent(m, "")))
	}
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS,
		"message": map[string]any{"type": "message", "user": BotUser, "bot_id": BotID, "text": m.Text, "ts": m.TS}}
}

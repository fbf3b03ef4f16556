package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

const (
	// Token is the only bot token the fake accepts.
	Token = "123456:fake-token-do-not-log"
	// BotName is the fake bot's username.
	BotName = "jakebot"
	// maxLen is Telegram's message limit in UTF-16 units.
	maxLen = 4096
)

// Chat is a chat users write in: a private chat (ID is the user's
// id) or a supergroup, which may be a forum with topics.
type Chat struct {
	ID      int64
	Type    string // "private" or "supergroup"
	Title   string
	IsForum bool
}

// User is a person writing to the bot.
type User struct {
	ID        int64
	FirstName string
	Username  string
}

// Private returns u's private chat with the bot.
func (u User) Private() Chat {
	return Chat{ID: u.ID, Type: "private"}
}

// Call is one request the fake received.
type Call struct {
	Method string
	Params url.Values
	// At is the fake's Now when the request arrived.
	At time.Time
	// Error is the description of the error the fake answered, or empty.
	Error string
}

// Message is a message the bot posted, as it stands after edits.
type Message struct {
	ID        int
	ChatID    int64
	Thread    int
	Text      string
	ParseMode string
	// Markup is the reply_markup JSON, empty when there is none.
	Markup string
	Edits  int
	// ReplyTo is the message it replies to (reply_parameters), 0 when
	// none.
	ReplyTo int
}

// Failure is an error the fake answers instead of handling a call.
type Failure struct {
	Code        int
	Description string
	// RetryAfter, in seconds, makes the answer a flood-control error, and
	// the fake then refuses every write to that chat until it has passed.
	RetryAfter int
}

// Server is a fake Telegram Bot API server. It speaks the real
// HTTP API (form-encoded requests, {"ok":...} answers) so that the real
// client library can be pointed at it through Endpoint. It is safe for
// concurrent use.
type Server struct {
	// Now stamps calls and times flood control; a test with a fake clock
	// sets it before the first call. It defaults to time.Now.
	Now func() time.Time

	srv *httptest.Server

	mu         sync.Mutex
	changes    fakeserver.Signal
	calls      []Call
	updates    []pendingUpdate
	nextUpdate int
	confirmed  int
	nextMsg    int
	chats      map[int64]Chat
	topics     map[int64]map[int]string
	messages   map[int64][]*Message
	said       map[int64][]int // the messages users wrote, per chat
	callbacks  map[string]bool // id -> answered
	failures   map[string][]Failure
	stalls     map[string][]time.Duration
	// holds are the calls to hold until the test releases them.
	holds map[string][]*fakeserver.Hold
	// confirmStalls are the stalls of the first getUpdates that confirms
	// update past (StallConfirmingNext).
	confirmStalls []confirmStall
	floodUntil    map[string]time.Time
	reactions     map[[2]int64]string // chat and message: the bot's emoji
	violations    []Call
	// polling is closed to end the getUpdates held now (nil: none);
	// conflicts are the getUpdates that came while another was held.
	polling   *poll
	conflicts []Call
	commands  string
	// webhookSecret is the secret_token of the last setWebhook.
	webhookSecret string
	files         map[string]*File
	nextFile      int
	documents     []Document
}

type pendingUpdate struct {
	id   int
	body map[string]any
}

// New starts a fake Bot API server, closed when the test
// ends.
func New(t testing.TB) *Server {
	s := &Server{
		Now:        time.Now,
		nextUpdate: 1000,
		nextMsg:    1,
		chats:      make(map[int64]Chat),
		topics:     make(map[int64]map[int]string),
		messages:   make(map[int64][]*Message),
		said:       make(map[int64][]int),
		callbacks:  make(map[string]bool),
		failures:   make(map[string][]Failure),
		stalls:     make(map[string][]time.Duration),
		holds:      make(map[string][]*fakeserver.Hold),
		floodUntil: make(map[string]time.Time),
		files:      make(map[string]*File),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Endpoint is the API endpoint in the client library's format
// ("…/bot%s/%s"), pointing at the fake.
func (s *Server) Endpoint() string { return s.srv.URL + "/bot%s/%s" }

// URL is the fake's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Changed returns a channel closed at the next change: a call recorded or
// an update queued. Tests wait on it instead of sleeping.
func (s *Server) Changed() <-chan struct{} { return s.changes.Next() }

// notify wakes everyone waiting for a change. Call with s.mu held.
func (s *Server) notify() { s.changes.Notify() }

// WaitFor blocks until cond holds, re-checking at every change; it fails
// the test when nothing satisfies it within a generous deadline.
func (s *Server) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !s.changes.WaitFor(cond) {
		t.Fatalf("timed out waiting for %s; calls: %s", what, s.callSummary())
	}
}

func (s *Server) callSummary() string {
	var b strings.Builder
	for _, c := range s.Calls() {
		if c.Method == "getUpdates" {
			continue
		}
		fmt.Fprintf(&b, "\n  %s %s %q %s", c.At.Format("15:04:05.000"), c.Method, c.Params.Get("text"), c.Error)
	}
	return b.String()
}

// Calls returns the calls received, only those of the given methods when
// any are named.
func (s *Server) Calls(methods ...string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fakeserver.Keep(s.calls, func(c Call) bool { return len(methods) == 0 || contains(methods, c.Method) })
}

// Messages returns the bot's messages in chat, oldest first, as they
// stand now.
func (s *Server) Messages(chat int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages[chat] {
		out = append(out, *m)
	}
	return out
}

// Violations returns the writes that arrived while their chat was under
// flood control (before a 429's retry_after had passed).
func (s *Server) Violations() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.violations...)
}

// Conflicts returns the getUpdates calls that came while another was
// held: two bots polling one token at once, which the real Bot API ends
// with 409 Conflict. A test of a bot that must never poll twice asserts
// there are none.
func (s *Server) Conflicts() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.conflicts...)
}

// Confirmed returns the highest update id a getUpdates offset confirmed.
func (s *Server) Confirmed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Commands returns the command list last set with setMyCommands, as JSON.
func (s *Server) Commands() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commands
}

// CallbackAnswered reports whether the callback query id was answered.
func (s *Server) CallbackAnswered(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callbacks[id]
}

// FailNext makes the next call of method answer f instead.
func (s *Server) FailNext(method string, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method] = append(s.failures[method], f)
}

// StallNext makes the next call of method time out: the fake holds it
// for d without acting on it, then closes the connection. The call is
// recorded with the error "stalled".
func (s *Server) StallNext(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalls[method] = append(s.stalls[method], d)
}

// HoldNext makes the next call of method wait, before the fake acts on
// it, until the returned Hold is released: a Bot API slow at one point.
// Released when the test ends at the latest.
func (s *Server) HoldNext(t testing.TB, method string) *fakeserver.Hold {
	h := fakeserver.NewHold()
	s.mu.Lock()
	s.holds[method] = append(s.holds[method], h)
	s.mu.Unlock()
	t.Cleanup(h.Release)
	return h
}

// takeHold returns the hold of the next call of method, if any.
func (s *Server) takeHold(method string) (*fakeserver.Hold, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.holds[method]
	if len(q) == 0 {
		return nil, false
	}
	s.holds[method] = q[1:]
	return q[0], true
}

// StallConfirmingNext makes the first getUpdates that would confirm the
// next update queued (its offset past that update's id) time out as
// StallNext does, for d: a bot whose confirmation never reaches Telegram,
// killed before it could send another. Later getUpdates confirm it.
func (s *Server) StallConfirmingNext(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.confirmStalls = append(s.confirmStalls, confirmStall{past: s.nextUpdate, d: d})
}

type confirmStall struct {
	past int
	d    time.Duration
}

// takeStall returns how long to stall a call of method with params p, if
// it must be.
func (s *Server) takeStall(method string, p url.Values) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if method == "getUpdates" {
		offset, _ := strconv.Atoi(p.Get("offset"))
		for i, cs := range s.confirmStalls {
			if offset > cs.past {
				s.confirmStalls = slices.Delete(s.confirmStalls, i, i+1)
				return cs.d, true
			}
		}
	}
	q := s.stalls[method]
	if len(q) == 0 {
		return 0, false
	}
	s.stalls[method] = q[1:]
	return q[0], true
}

// RateLimitNext makes the next call of method a 429 with retry_after.
func (s *Server) RateLimitNext(method string, retryAfter int) {
	s.FailNext(method, Failure{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter})
}

// NewTopic creates a forum topic in chat and returns its message_thread_id.
func (s *Server) NewTopic(chat Chat, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chat.ID] = chat
	return s.newTopic(chat.ID, name)
}

func (s *Server) newTopic(chat int64, name string) int {
	id := s.nextMsg
	s.nextMsg++
	if s.topics[chat] == nil {
		s.topics[chat] = make(map[int]string)
	}
	s.topics[chat][id] = name
	return id
}

// UserSays queues an update: from writes text in chat, in forum topic
// thread when thread is not 0. It returns the update id.
func (s *Server) UserSays(chat Chat, from User, thread int, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := s.userMessage(chat, from)
	msg["text"] = text
	if thread != 0 {
		msg["message_thread_id"] = thread
		msg["is_topic_message"] = true
	}
	if strings.HasPrefix(text, "/") {
		word, _, _ := strings.Cut(text, " ")
		msg["entities"] = []map[string]any{{"type": "bot_command", "offset": 0, "length": UTF16Len(word)}}
	}
	return s.queue(map[string]any{"message": msg})
}

// PressButton queues a callback query: from pressed the inline button with
// callback data on the bot's message m. It returns the query's id.
func (s *Server) PressButton(from User, m Message, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("cbq-%d", s.nextUpdate)
	s.callbacks[id] = false
	s.queue(map[string]any{"callback_query": map[string]any{
		"id":            id,
		"from":          userJSON(from),
		"message":       s.messageJSON(m),
		"chat_instance": "ci-" + strconv.FormatInt(m.ChatID, 10),
		"data":          data,
	}})
	return id
}

// userMessage is a new message of from in chat, without its content;
// s.mu is held.
func (s *Server) userMessage(chat Chat, from User) map[string]any {
	s.chats[chat.ID] = chat
	id := s.nextMsg
	s.nextMsg++
	s.said[chat.ID] = append(s.said[chat.ID], id)
	return map[string]any{"message_id": id, "from": userJSON(from), "chat": chatJSON(chat), "date": s.Now().Unix()}
}

// LastUserMessage returns the id of the newest message a user wrote in
// chat, or 0.
func (s *Server) LastUserMessage(chat int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ids := s.said[chat]; len(ids) > 0 {
		return ids[len(ids)-1]
	}
	return 0
}

// UserDeletes deletes a user's message id in chat, as its author can:
// a reply to it then finds it gone.
func (s *Server) UserDeletes(chat int64, id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.said[chat] = slices.DeleteFunc(s.said[chat], func(x int) bool { return x == id })
}

func (s *Server) queue(body map[string]any) int {
	id := s.nextUpdate
	s.nextUpdate++
	body["update_id"] = id
	s.updates = append(s.updates, pendingUpdate{id, body})
	s.notify()
	return id
}

func userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "is_bot": false, "first_name": u.FirstName, "username": u.Username}
}

func chatJSON(c Chat) map[string]any {
	m := map[string]any{"id": c.ID, "type": c.Type}
	if c.Title != "" {
		m["title"] = c.Title
	}
	if c.IsForum {
		m["is_forum"] = true
	}
	return m
}

func (s *Server) messageJSON(m Message) map[string]any {
	out := map[string]any{
		"message_id": m.ID,
		"from":       map[string]any{"id": 4242, "is_bot": true, "first_name": "Jake", "username": BotName},
		"chat":       chatJSON(s.chats[m.ChatID]),
		"date":       s.Now().Unix(),
		"text":       m.Text,
	}
	if m.Thread != 0 {
		out["message_thread_id"] = m.Thread
		out["is_topic_message"] = true
	}
	if m.Markup != "" {
		out["reply_markup"] = json.RawMessage(m.Markup)
	}
	if m.ReplyTo != 0 {
		out["reply_to_message"] = map[string]any{"message_id": m.ReplyTo, "chat": chatJSON(s.chats[m.ChatID]), "date": s.Now().Unix()}
	}
	return out
}

package platformtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

const (
	// TelegramToken is the only bot token the fake accepts.
	TelegramToken = "123456:fake-token-do-not-log"
	// TelegramBotName is the fake bot's username.
	TelegramBotName = "jakebot"
	// telegramMaxLen is Telegram's message limit in UTF-16 units.
	telegramMaxLen = 4096
)

// TelegramChat is a chat users write in: a private chat (ID is the user's
// id) or a supergroup, which may be a forum with topics.
type TelegramChat struct {
	ID      int64
	Type    string // "private" or "supergroup"
	Title   string
	IsForum bool
}

// TelegramUser is a person writing to the bot.
type TelegramUser struct {
	ID        int64
	FirstName string
	Username  string
}

// Private returns u's private chat with the bot.
func (u TelegramUser) Private() TelegramChat {
	return TelegramChat{ID: u.ID, Type: "private"}
}

// TelegramCall is one request the fake received.
type TelegramCall struct {
	Method string
	Params url.Values
	// At is the fake's Now when the request arrived.
	At time.Time
	// Error is the description of the error the fake answered, or empty.
	Error string
}

// TelegramMessage is a message the bot posted, as it stands after edits.
type TelegramMessage struct {
	ID        int
	ChatID    int64
	Thread    int
	Text      string
	ParseMode string
	// Markup is the reply_markup JSON, empty when there is none.
	Markup string
	Edits  int
}

// TelegramFailure is an error the fake answers instead of handling a call.
type TelegramFailure struct {
	Code        int
	Description string
	// RetryAfter, in seconds, makes the answer a flood-control error, and
	// the fake then refuses every write to that chat until it has passed.
	RetryAfter int
}

// TelegramServer is a fake Telegram Bot API server. It speaks the real
// HTTP API (form-encoded requests, {"ok":...} answers) so that the real
// client library can be pointed at it through Endpoint. It is safe for
// concurrent use.
type TelegramServer struct {
	// Now stamps calls and times flood control; a test with a fake clock
	// sets it before the first call. It defaults to time.Now.
	Now func() time.Time

	srv *httptest.Server

	mu         sync.Mutex
	changed    chan struct{}
	calls      []TelegramCall
	updates    []pendingUpdate
	nextUpdate int
	confirmed  int
	nextMsg    int
	chats      map[int64]TelegramChat
	topics     map[int64]map[int]string
	messages   map[int64][]*TelegramMessage
	callbacks  map[string]bool // id -> answered
	failures   map[string][]TelegramFailure
	floodUntil map[string]time.Time
	violations []TelegramCall
	commands   string
	// webhookSecret is the secret_token of the last setWebhook.
	webhookSecret string
}

type pendingUpdate struct {
	id   int
	body map[string]any
}

// NewTelegramServer starts a fake Bot API server, closed when the test
// ends.
func NewTelegramServer(t testing.TB) *TelegramServer {
	s := &TelegramServer{
		Now:        time.Now,
		changed:    make(chan struct{}),
		nextUpdate: 1000,
		nextMsg:    1,
		chats:      make(map[int64]TelegramChat),
		topics:     make(map[int64]map[int]string),
		messages:   make(map[int64][]*TelegramMessage),
		callbacks:  make(map[string]bool),
		failures:   make(map[string][]TelegramFailure),
		floodUntil: make(map[string]time.Time),
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Endpoint is the API endpoint in the client library's format
// ("…/bot%s/%s"), pointing at the fake.
func (s *TelegramServer) Endpoint() string { return s.srv.URL + "/bot%s/%s" }

// URL is the fake's base URL.
func (s *TelegramServer) URL() string { return s.srv.URL }

// Changed returns a channel closed at the next change: a call recorded or
// an update queued. Tests wait on it instead of sleeping.
func (s *TelegramServer) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// notify wakes everyone waiting for a change. Call with s.mu held.
func (s *TelegramServer) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// WaitFor blocks until cond holds, re-checking at every change; it fails
// the test when nothing satisfies it within a generous deadline.
func (s *TelegramServer) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		ch := s.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; calls: %s", what, s.callSummary())
		}
	}
}

func (s *TelegramServer) callSummary() string {
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
func (s *TelegramServer) Calls(methods ...string) []TelegramCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []TelegramCall
	for _, c := range s.calls {
		if len(methods) == 0 || contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns the bot's messages in chat, oldest first, as they
// stand now.
func (s *TelegramServer) Messages(chat int64) []TelegramMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []TelegramMessage
	for _, m := range s.messages[chat] {
		out = append(out, *m)
	}
	return out
}

// Violations returns the writes that arrived while their chat was under
// flood control (before a 429's retry_after had passed).
func (s *TelegramServer) Violations() []TelegramCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TelegramCall(nil), s.violations...)
}

// Confirmed returns the highest update id a getUpdates offset confirmed.
func (s *TelegramServer) Confirmed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Commands returns the command list last set with setMyCommands, as JSON.
func (s *TelegramServer) Commands() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commands
}

// CallbackAnswered reports whether the callback query id was answered.
func (s *TelegramServer) CallbackAnswered(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callbacks[id]
}

// FailNext makes the next call of method answer f instead.
func (s *TelegramServer) FailNext(method string, f TelegramFailure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method] = append(s.failures[method], f)
}

// RateLimitNext makes the next call of method a 429 with retry_after.
func (s *TelegramServer) RateLimitNext(method string, retryAfter int) {
	s.FailNext(method, TelegramFailure{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter})
}

// NewTopic creates a forum topic in chat and returns its message_thread_id.
func (s *TelegramServer) NewTopic(chat TelegramChat, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chat.ID] = chat
	return s.newTopic(chat.ID, name)
}

func (s *TelegramServer) newTopic(chat int64, name string) int {
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
func (s *TelegramServer) UserSays(chat TelegramChat, from TelegramUser, thread int, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chat.ID] = chat
	msg := map[string]any{
		"message_id": s.nextMsg,
		"from":       userJSON(from),
		"chat":       chatJSON(chat),
		"date":       s.Now().Unix(),
		"text":       text,
	}
	s.nextMsg++
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
func (s *TelegramServer) PressButton(from TelegramUser, m TelegramMessage, data string) string {
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

func (s *TelegramServer) queue(body map[string]any) int {
	id := s.nextUpdate
	s.nextUpdate++
	body["update_id"] = id
	s.updates = append(s.updates, pendingUpdate{id, body})
	s.notify()
	return id
}

func userJSON(u TelegramUser) map[string]any {
	return map[string]any{"id": u.ID, "is_bot": false, "first_name": u.FirstName, "username": u.Username}
}

func chatJSON(c TelegramChat) map[string]any {
	m := map[string]any{"id": c.ID, "type": c.Type}
	if c.Title != "" {
		m["title"] = c.Title
	}
	if c.IsForum {
		m["is_forum"] = true
	}
	return m
}

func (s *TelegramServer) messageJSON(m TelegramMessage) map[string]any {
	out := map[string]any{
		"message_id": m.ID,
		"from":       map[string]any{"id": 4242, "is_bot": true, "first_name": "Jake", "username": TelegramBotName},
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
	return out
}

var pathRE = regexp.MustCompile(`^/bot([^/]+)/([A-Za-z]+)$`)

func (s *TelegramServer) serve(w http.ResponseWriter, r *http.Request) {
	at := s.Now()
	m := pathRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		reply(w, failure(400, "Bad Request: "+err.Error()), nil)
		return
	}
	call := TelegramCall{Method: m[2], Params: r.PostForm, At: at}
	var result any
	var f *TelegramFailure
	if m[1] != TelegramToken {
		f = failure(401, "Unauthorized")
	} else if m[2] == "getUpdates" {
		s.record(call)
		s.getUpdates(w, r)
		return
	} else {
		result, f = s.handle(&call)
	}
	if f != nil {
		call.Error = f.Description
	}
	s.record(call)
	reply(w, f, result)
}

func (s *TelegramServer) record(c TelegramCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.notify()
}

func failure(code int, desc string) *TelegramFailure {
	return &TelegramFailure{Code: code, Description: desc}
}

func reply(w http.ResponseWriter, f *TelegramFailure, result any) {
	w.Header().Set("Content-Type", "application/json")
	if f == nil {
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
		return
	}
	body := map[string]any{"ok": false, "error_code": f.Code, "description": f.Description}
	if f.RetryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": f.RetryAfter}
	}
	w.WriteHeader(f.Code)
	_ = json.NewEncoder(w).Encode(body)
}

// getUpdates answers queued updates from offset on, confirming (dropping)
// those before it; with none queued it holds the request for up to timeout
// seconds and answers as soon as one is queued.
func (s *TelegramServer) getUpdates(w http.ResponseWriter, r *http.Request) {
	offset, _ := strconv.Atoi(r.PostForm.Get("offset"))
	timeout, _ := strconv.Atoi(r.PostForm.Get("timeout"))
	limit, _ := strconv.Atoi(r.PostForm.Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Duration(timeout) * time.Second)
		defer t.Stop()
		expired = t.C
	}
	for {
		s.mu.Lock()
		if offset > 0 {
			for len(s.updates) > 0 && s.updates[0].id < offset {
				s.confirmed = max(s.confirmed, s.updates[0].id)
				s.updates = s.updates[1:]
			}
		}
		var out []map[string]any
		for _, u := range s.updates[:min(limit, len(s.updates))] {
			out = append(out, u.body)
		}
		ch := s.changed
		s.mu.Unlock()
		if len(out) > 0 || expired == nil {
			reply(w, nil, append([]map[string]any{}, out...))
			return
		}
		select {
		case <-ch:
		case <-expired:
			reply(w, nil, []any{})
			return
		case <-r.Context().Done():
			return
		}
	}
}

// handle answers every method but getUpdates.
func (s *TelegramServer) handle(c *TelegramCall) (any, *TelegramFailure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := c.Params
	chat, _ := strconv.ParseInt(p.Get("chat_id"), 10, 64)
	if f := s.flood(c, chat); f != nil {
		return nil, f
	}
	switch c.Method {
	case "getMe":
		return map[string]any{"id": 4242, "is_bot": true, "first_name": "Jake", "username": TelegramBotName, "can_join_groups": true}, nil
	case "sendMessage":
		return s.sendMessage(chat, p)
	case "editMessageText":
		return s.editMessageText(chat, p)
	case "sendChatAction":
		if _, ok := s.chats[chat]; !ok {
			return nil, failure(400, "Bad Request: chat not found")
		}
		return true, nil
	case "answerCallbackQuery":
		id := p.Get("callback_query_id")
		if answered, ok := s.callbacks[id]; !ok || answered {
			return nil, failure(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
		}
		s.callbacks[id] = true
		return true, nil
	case "setMyCommands":
		return s.setMyCommands(p.Get("commands"))
	case "createForumTopic":
		id := s.newTopic(chat, p.Get("name"))
		return map[string]any{"message_thread_id": id, "name": p.Get("name"), "icon_color": 7322096}, nil
	case "setWebhook":
		s.webhookSecret = p.Get("secret_token")
		return true, nil
	case "deleteWebhook":
		s.webhookSecret = ""
		return true, nil
	}
	return nil, failure(404, "Not Found")
}

// flood answers an injected failure for the call, and enforces flood
// control: after a 429 for a chat, every write to it is refused (and
// recorded as a violation) until retry_after has passed.
func (s *TelegramServer) flood(c *TelegramCall, chat int64) *TelegramFailure {
	key := strconv.FormatInt(chat, 10)
	if until, ok := s.floodUntil[key]; ok && c.At.Before(until) && isWrite(c.Method) {
		s.violations = append(s.violations, *c)
		return &TelegramFailure{Code: 429, Description: "Too Many Requests: sent before retry_after", RetryAfter: int(until.Sub(c.At).Seconds()) + 1}
	}
	if fs := s.failures[c.Method]; len(fs) > 0 {
		f := fs[0]
		s.failures[c.Method] = fs[1:]
		if f.RetryAfter > 0 {
			s.floodUntil[key] = c.At.Add(time.Duration(f.RetryAfter) * time.Second)
		}
		return &f
	}
	return nil
}

func isWrite(method string) bool {
	return method == "sendMessage" || method == "editMessageText"
}

// checkText validates a message's text as Telegram does.
func checkText(text, parseMode string) *TelegramFailure {
	if !utf8.ValidString(text) {
		return failure(400, "Bad Request: text must be encoded in UTF-8")
	}
	plain := text
	switch parseMode {
	case "":
	case "HTML":
		var err error
		if plain, err = ParseTelegramHTML(text); err != nil {
			return failure(400, "Bad Request: can't parse entities: "+err.Error())
		}
	default:
		return failure(400, "Bad Request: unsupported parse_mode "+parseMode)
	}
	if strings.TrimSpace(plain) == "" {
		return failure(400, "Bad Request: message text is empty")
	}
	if UTF16Len(plain) > telegramMaxLen {
		return failure(400, "Bad Request: message is too long")
	}
	return nil
}

func (s *TelegramServer) sendMessage(chat int64, p url.Values) (any, *TelegramFailure) {
	c, ok := s.chats[chat]
	if !ok {
		return nil, failure(400, "Bad Request: chat not found")
	}
	thread, _ := strconv.Atoi(p.Get("message_thread_id"))
	if thread != 0 && (!c.IsForum || s.topics[chat][thread] == "") {
		return nil, failure(400, "Bad Request: message thread not found")
	}
	if f := checkText(p.Get("text"), p.Get("parse_mode")); f != nil {
		return nil, f
	}
	m := &TelegramMessage{ID: s.nextMsg, ChatID: chat, Thread: thread, Text: p.Get("text"), ParseMode: p.Get("parse_mode"), Markup: p.Get("reply_markup")}
	s.nextMsg++
	s.messages[chat] = append(s.messages[chat], m)
	return s.messageJSON(*m), nil
}

func (s *TelegramServer) editMessageText(chat int64, p url.Values) (any, *TelegramFailure) {
	id, _ := strconv.Atoi(p.Get("message_id"))
	var m *TelegramMessage
	for _, x := range s.messages[chat] {
		if x.ID == id {
			m = x
		}
	}
	if m == nil {
		return nil, failure(400, "Bad Request: message to edit not found")
	}
	if f := checkText(p.Get("text"), p.Get("parse_mode")); f != nil {
		return nil, f
	}
	if m.Text == p.Get("text") && m.ParseMode == p.Get("parse_mode") && m.Markup == p.Get("reply_markup") {
		return nil, failure(400, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.Text, m.ParseMode, m.Markup = p.Get("text"), p.Get("parse_mode"), p.Get("reply_markup")
	m.Edits++
	return s.messageJSON(*m), nil
}

var commandRE = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

func (s *TelegramServer) setMyCommands(raw string) (any, *TelegramFailure) {
	var cmds []struct{ Command, Description string }
	if err := json.Unmarshal([]byte(raw), &cmds); err != nil {
		return nil, failure(400, "Bad Request: can't parse commands JSON object")
	}
	if len(cmds) > 100 {
		return nil, failure(400, "Bad Request: too many commands")
	}
	for _, c := range cmds {
		if !commandRE.MatchString(c.Command) {
			return nil, failure(400, "Bad Request: BOT_COMMAND_INVALID")
		}
		if n := utf8.RuneCountInString(c.Description); n < 1 || n > 256 {
			return nil, failure(400, "Bad Request: command description must be 1-256 characters")
		}
	}
	s.commands = raw
	return true, nil
}

// PushUpdates delivers the queued updates to a webhook at url, as
// Telegram does once setWebhook has been called: one POST per update with
// the secret token from setWebhook, the update dropped once answered 200.
// It returns the status of each POST.
func (s *TelegramServer) PushUpdates(url string) ([]int, error) {
	var statuses []int
	for {
		s.mu.Lock()
		if len(s.updates) == 0 {
			s.mu.Unlock()
			return statuses, nil
		}
		u := s.updates[0]
		secret := s.webhookSecret
		s.mu.Unlock()
		body, err := json.Marshal(u.body)
		if err != nil {
			return statuses, err
		}
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
		if err != nil {
			return statuses, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return statuses, err
		}
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
		if resp.StatusCode != http.StatusOK {
			return statuses, nil
		}
		s.mu.Lock()
		if len(s.updates) > 0 && s.updates[0].id == u.id {
			s.updates = s.updates[1:]
		}
		s.mu.Unlock()
	}
}

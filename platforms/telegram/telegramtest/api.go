package telegramtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

// This file holds the fake's Bot API methods.

var pathRE = regexp.MustCompile(`^/bot([^/]+)/([A-Za-z]+)$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	at := s.Now()
	if strings.HasPrefix(r.URL.Path, "/file/bot") {
		s.serveFile(w, r)
		return
	}
	m := pathRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		err = r.ParseMultipartForm(64 << 20)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		reply(w, failure(400, "Bad Request: "+err.Error()), nil)
		return
	}
	if h, ok := s.takeHold(m[2]); ok {
		h.Wait()
	}
	call := Call{Method: m[2], Params: r.PostForm, At: at}
	var result any
	var f *Failure
	if m[1] != Token {
		f = failure(401, "Unauthorized")
	} else if d, ok := s.takeStall(m[2], r.PostForm); ok {
		call.Error = "stalled"
		s.record(call)
		fakeserver.Stall(w, r, d)
		return
	} else if m[2] == "getUpdates" {
		s.record(call)
		s.getUpdates(w, r)
		return
	} else {
		result, f = s.handle(&call, r)
	}
	if f != nil {
		call.Error = f.Description
	}
	s.record(call)
	reply(w, f, result)
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.notify()
}

func failure(code int, desc string) *Failure {
	return &Failure{Code: code, Description: desc}
}

func reply(w http.ResponseWriter, f *Failure, result any) {
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
// seconds and answers as soon as one is queued. As the real Bot API does,
// a getUpdates that comes while another is held ends the held one with
// 409 Conflict ("terminated by other getUpdates request"): two bots
// polling one token. The fake records each such conflict (Conflicts).
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request) {
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
	terminated := s.startPoll(r)
	defer s.endPoll(terminated)
	for {
		s.mu.Lock()
		if offset > 0 && len(s.updates) > 0 && s.updates[0].id < offset {
			for len(s.updates) > 0 && s.updates[0].id < offset {
				s.confirmed = max(s.confirmed, s.updates[0].id)
				s.updates = s.updates[1:]
			}
			s.notify() // a test may wait for the confirmation (Confirmed)
		}
		var out []map[string]any
		for _, u := range s.updates[:min(limit, len(s.updates))] {
			out = append(out, u.body)
		}
		ch := s.changes.Next()
		s.mu.Unlock()
		if len(out) > 0 || expired == nil {
			s.endPoll(terminated) // before the bot hears back and polls again
			reply(w, nil, append([]map[string]any{}, out...))
			return
		}
		select {
		case <-ch:
		case <-expired:
			s.endPoll(terminated)
			reply(w, nil, []any{})
			return
		case <-terminated:
			reply(w, failure(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"), nil)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// startPoll registers a getUpdates as the one held, ending (and
// recording as a conflict) the one held before, if any. It returns the
// channel closed when a later one ends it. A held poll whose bot went
// away (its request cancelled: a bot that stopped, or that polls again
// at once after cancelling) is no conflict; the server notices that a
// moment after the bot's next request may come, so it waits up to
// goneGrace for it.
func (s *Server) startPoll(r *http.Request) chan struct{} {
	s.mu.Lock()
	held := s.polling
	s.mu.Unlock()
	if held != nil {
		select {
		case <-held.gone.Done():
		case <-time.After(goneGrace):
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.polling != nil && s.polling.gone.Err() == nil {
		close(s.polling.end)
		s.conflicts = append(s.conflicts, Call{Method: "getUpdates", Params: r.PostForm, At: s.Now(),
			Error: "Conflict: terminated by other getUpdates request"})
	}
	s.polling = &poll{end: make(chan struct{}), gone: r.Context()}
	return s.polling.end
}

// goneGrace is how long a getUpdates that comes while another is held
// waits for the held one's bot to be seen gone: a real second poller's
// request stays open, and is a conflict however long the fake waits.
const goneGrace = 100 * time.Millisecond

// poll is a getUpdates held: end ends it with 409, gone is its request's
// context, done once its bot went away.
type poll struct {
	end  chan struct{}
	gone context.Context
}

// endPoll unregisters the getUpdates whose channel is mine, if it is
// still the one held.
func (s *Server) endPoll(mine chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.polling != nil && s.polling.end == mine {
		s.polling = nil
	}
}

// handle answers every method but getUpdates.
func (s *Server) handle(c *Call, r *http.Request) (any, *Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := c.Params
	chat, _ := strconv.ParseInt(p.Get("chat_id"), 10, 64)
	if f := s.flood(c, chat); f != nil {
		return nil, f
	}
	switch c.Method {
	case "getFile":
		return s.getFile(p.Get("file_id"))
	case "sendDocument":
		return s.sendDocument(chat, r)
	case "getMe":
		return map[string]any{"id": 4242, "is_bot": true, "first_name": "Jake", "username": BotName, "can_join_groups": true}, nil
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
	case "setMessageReaction":
		return s.setMessageReaction(chat, p)
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
// control: after a 429 for a chat, every write to it (a reaction too) is
// refused, and recorded as a violation, until retry_after has passed.
func (s *Server) flood(c *Call, chat int64) *Failure {
	key := strconv.FormatInt(chat, 10)
	if until, ok := s.floodUntil[key]; ok && c.At.Before(until) && isWrite(c.Method) {
		s.violations = append(s.violations, *c)
		return &Failure{Code: 429, Description: "Too Many Requests: sent before retry_after", RetryAfter: int(until.Sub(c.At).Seconds()) + 1}
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

// isWrite reports whether a chat's flood control holds method: its
// messages and the bot's reactions in it.
func isWrite(method string) bool {
	return method == "sendMessage" || method == "editMessageText" || method == "setMessageReaction"
}

// checkText validates a message's text as Telegram does.
func checkText(text, parseMode string) *Failure {
	if !utf8.ValidString(text) {
		return failure(400, "Bad Request: text must be encoded in UTF-8")
	}
	plain := text
	switch parseMode {
	case "":
	case "HTML":
		var err error
		if plain, err = ParseHTML(text); err != nil {
			return failure(400, "Bad Request: can't parse entities: "+err.Error())
		}
	default:
		return failure(400, "Bad Request: unsupported parse_mode "+parseMode)
	}
	if strings.TrimSpace(plain) == "" {
		return failure(400, "Bad Request: message text is empty")
	}
	if UTF16Len(plain) > maxLen {
		return failure(400, "Bad Request: message is too long")
	}
	return nil
}

func (s *Server) sendMessage(chat int64, p url.Values) (any, *Failure) {
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
	replyTo, f := s.replyTo(chat, p)
	if f != nil {
		return nil, f
	}
	m := &Message{ID: s.nextMsg, ChatID: chat, Thread: thread, Text: p.Get("text"), ParseMode: p.Get("parse_mode"), Markup: p.Get("reply_markup"),
		ReplyTo: replyTo}
	s.nextMsg++
	s.messages[chat] = append(s.messages[chat], m)
	return s.messageJSON(*m), nil
}

// replyTo reads the message a new one replies to, from reply_parameters
// or the older reply_to_message_id, as Telegram does: a message no
// longer there refuses the new one, unless allow_sending_without_reply
// makes it a plain message; s.mu is held.
func (s *Server) replyTo(chat int64, p url.Values) (int, *Failure) {
	var r struct {
		MessageID int  `json:"message_id"`
		Allow     bool `json:"allow_sending_without_reply"`
	}
	if raw := p.Get("reply_parameters"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return 0, failure(400, "Bad Request: can't parse reply parameters JSON object")
		}
	} else {
		r.MessageID, _ = strconv.Atoi(p.Get("reply_to_message_id"))
		r.Allow = p.Get("allow_sending_without_reply") == "true"
	}
	switch {
	case r.MessageID == 0:
		return 0, nil
	case slices.Contains(s.said[chat], r.MessageID) || slices.ContainsFunc(s.messages[chat], func(m *Message) bool { return m.ID == r.MessageID }):
		return r.MessageID, nil
	case r.Allow:
		return 0, nil
	}
	return 0, failure(400, "Bad Request: message to be replied not found")
}

func (s *Server) editMessageText(chat int64, p url.Values) (any, *Failure) {
	id, _ := strconv.Atoi(p.Get("message_id"))
	var m *Message
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

func (s *Server) setMyCommands(raw string) (any, *Failure) {
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
func (s *Server) PushUpdates(url string) ([]int, error) {
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

package plugintest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Reply is one scripted answer of a fake model server. The zero Reply is
// an empty successful answer.
type Reply struct {
	// Text is the answer's text, streamed one chunk per element.
	Text []string
	// Tool, when set, makes the answer a tool call after the text.
	Tool *ToolCall
	// Status, when non-zero, answers with this HTTP status and an API
	// error body carrying Message instead of a stream.
	Status  int
	Message string
	// Hold, when set, stalls the stream after its first event until Hold
	// is closed or the client goes away: a slow model, for cancellation.
	Hold <-chan struct{}
}

// ToolCall is a tool the fake model asks the CLI to run.
type ToolCall struct {
	ID, Name string
	Input    map[string]any
}

// Request is a request a fake model server received.
type Request struct {
	Path   string
	Body   []byte
	Header http.Header
}

// Text returns every text found in the conversation the request carries
// (Anthropic messages, Gemini contents, OpenAI input), one per line, so a
// test can check that a resumed turn sent the earlier exchange.
func (r Request) Text() string {
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		return ""
	}
	var sb strings.Builder
	for _, key := range []string{"messages", "contents", "input"} {
		collectText(&sb, body[key], "")
	}
	return sb.String()
}

// textKeys are the fields that hold conversation text in the three APIs:
// text parts, string contents, tool outputs and tool arguments.
var textKeys = map[string]bool{"text": true, "content": true, "output": true, "arguments": true}

func collectText(sb *strings.Builder, v any, key string) {
	switch v := v.(type) {
	case string:
		if textKeys[key] {
			sb.WriteString(v)
			sb.WriteByte('\n')
		}
	case []any:
		for _, e := range v {
			collectText(sb, e, key)
		}
	case map[string]any:
		for k, e := range v {
			collectText(sb, e, k)
		}
	}
}

// replyQueue is the queue of replies and the log of requests that every fake
// model server shares. It is safe for concurrent use.
type replyQueue struct {
	t       testing.TB
	mu      sync.Mutex
	replies []Reply
	reqs    []Request
	arrived chan Request
}

func newReplyQueue(t testing.TB, replies []Reply) *replyQueue {
	return &replyQueue{t: t, replies: replies, arrived: make(chan Request, 256)}
}

// record logs a request and announces it on arrived without blocking.
func (s *replyQueue) record(r *http.Request, body []byte) Request {
	req := Request{Path: r.URL.Path, Body: body, Header: r.Header.Clone()}
	if r.URL.RawQuery != "" {
		req.Path += "?" + r.URL.RawQuery
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	select {
	case s.arrived <- req:
	default:
	}
	return req
}

// next pops the next scripted reply. With none left, the test fails and
// the client gets a 400 (not retried) saying so.
func (s *replyQueue) next(path string) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) == 0 {
		s.t.Errorf("fake model: unscripted request to %s", path)
		return Reply{Status: http.StatusBadRequest, Message: "fake model: no reply scripted"}
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r
}

func (s *replyQueue) push(replies []Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, replies...)
	s.mu.Unlock()
}

func (s *replyQueue) requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// waitHold waits for the reply's Hold channel or for the client to go away.
func waitHold(r *http.Request, rep Reply) {
	if rep.Hold == nil {
		return
	}
	select {
	case <-rep.Hold:
	case <-r.Context().Done():
	}
}

// sendEvent writes one server-sent event and flushes it.
func sendEvent(w http.ResponseWriter, event string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event != "" {
		w.Write([]byte("event: " + event + "\n"))
	}
	w.Write([]byte("data: "))
	w.Write(b)
	w.Write([]byte("\n\n"))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

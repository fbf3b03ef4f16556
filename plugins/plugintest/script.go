package plugintest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// otherText writes the conversation text of a Gemini (contents) or OpenAI
// Responses (input) request body, one text per line: text parts, string
// contents, tool outputs and tool arguments.
func otherText(sb *strings.Builder, raw []byte) {
	var body map[string]any
	if json.Unmarshal(raw, &body) != nil {
		return
	}
	for _, key := range []string{"contents", "input"} {
		collectText(sb, body[key], "")
	}
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
// model server shares; a fake embeds it for its Push, Requests and
// Arrived. It is safe for concurrent use.
type replyQueue struct {
	mu      sync.Mutex
	replies []Reply
	reqs    []Request
	arrived chan Request
}

func newReplyQueue(replies []Reply) *replyQueue {
	return &replyQueue{replies: append([]Reply(nil), replies...), arrived: make(chan Request, 1024)}
}

// record logs a request and announces it on arrived without blocking.
func (s *replyQueue) record(r *http.Request, body []byte) Request {
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body, Header: r.Header.Clone()}
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

// next pops the next scripted reply; with none left it is DefaultReply,
// so that a stray request never hangs.
func (s *replyQueue) next() Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) == 0 {
		return Reply{Text: []string{DefaultReply}}
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r
}

// Push adds replies to the end of the script.
func (s *replyQueue) Push(replies ...Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, replies...)
	s.mu.Unlock()
}

// Requests returns the requests received so far, oldest first.
func (s *replyQueue) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Arrived delivers each request as it arrives, before it is answered, so
// a test can wait for one without sleeping. It buffers 1024 requests and
// drops any beyond.
func (s *replyQueue) Arrived() <-chan Request { return s.arrived }

// waitHold waits for the reply's Hold channel, if any, and reports
// whether the client is still there to answer.
func waitHold(r *http.Request, rep Reply) bool {
	if rep.Hold != nil {
		select {
		case <-rep.Hold:
		case <-r.Context().Done():
		}
	}
	return r.Context().Err() == nil
}

// startServer starts handler on 127.0.0.1 and closes it when the test
// ends, dropping client connections first so held replies let go.
func startServer(t testing.TB, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// toolCalls returns a reply's tool calls in order: Tool, then Tools.
func (reply Reply) toolCalls() []ToolCall {
	calls := reply.Tools
	if reply.Tool != nil {
		calls = append([]ToolCall{*reply.Tool}, calls...)
	}
	return calls
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

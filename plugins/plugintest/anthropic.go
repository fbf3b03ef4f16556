package plugintest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Reply is one scripted model response to a main-conversation request.
type Reply struct {
	// Text is streamed in these chunks (one text_delta event each).
	Text []string
	// Tool, when set, is a tool_use block after the text; the reply then
	// stops with stop_reason "tool_use".
	Tool *ToolCall
	// Tools are more tool_use blocks after Tool, for parallel tool calls.
	Tools []ToolCall
	// Thinking, when set, is a thinking block before the text.
	Thinking string
	// Status, if non-zero, answers with this HTTP error status instead
	// (400, 401, 429, 500, 529), in Anthropic's error JSON shape.
	Status int
	// Message is the error message for Status; ErrorType, where set, its
	// type in the OpenAI fake's error (Codex's "usage_limit_reached").
	Message   string
	ErrorType string
	// Hold, if non-nil, is waited for (or the request's context) before
	// answering: a slow turn.
	Hold <-chan struct{}
	// Partial, with Hold, is text streamed before Hold is waited for: a
	// turn stopped mid-answer. Only the Gemini fake streams it.
	Partial []string
	// Headers are added to the response, error or not: a usage window
	// (UnifiedLimit for Claude, CodexLimits for Codex).
	Headers map[string]string
}

// ToolCall is a tool_use block the fake model asks the CLI to run.
type ToolCall struct {
	ID    string
	Name  string
	Input map[string]any
	// Namespace, for the OpenAI fake, is the function's namespace (Codex
	// puts an MCP server's tools in mcp__<server>).
	Namespace string
}

// Anthropic is a fake Anthropic Messages API for the real Claude Code CLI,
// pointed at it with ANTHROPIC_BASE_URL (see ClaudeEnv). Main-conversation
// requests are answered from a script of Replies; auxiliary requests the
// CLI makes on its own are answered generically (see isMain).
type Anthropic struct {
	// URL is the base URL to give the CLI as ANTHROPIC_BASE_URL.
	URL string

	srv     *httptest.Server
	arrived chan Request
	msgSeq  atomic.Int64

	mu       sync.Mutex
	script   []Reply
	requests []Request
	all      []Request
	// refused is the conversation of the last main request answered
	// with a 400 or 422, and refusal that reply: the same conversation
	// sent again is refused again.
	refused []byte
	refusal Reply
}

// NewAnthropic starts a fake Anthropic API on 127.0.0.1 that answers the
// main conversation with replies, in order. It is closed when the test
// ends.
func NewAnthropic(t testing.TB, replies ...Reply) *Anthropic {
	t.Helper()
	a := &Anthropic{
		script:  append([]Reply(nil), replies...),
		arrived: make(chan Request, 1024),
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(a.serve))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	a.srv = srv
	a.URL = srv.URL
	t.Cleanup(func() {
		// Close would wait for held replies; let them go first.
		srv.CloseClientConnections()
		srv.Close()
	})
	return a
}

// Push appends replies to the script.
func (a *Anthropic) Push(replies ...Reply) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.script = append(a.script, replies...)
}

// Requests returns the main-conversation requests received so far, in
// order.
func (a *Anthropic) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.requests...)
}

// AllRequests returns every request received so far, auxiliary ones
// included, in order.
func (a *Anthropic) AllRequests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Request(nil), a.all...)
}

// Arrived receives each main-conversation request as it arrives, before it
// is answered, so a test can wait until the CLI is talking to the model.
func (a *Anthropic) Arrived() <-chan Request { return a.arrived }

func (a *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Body: body, Header: r.Header.Clone()}
	a.mu.Lock()
	a.all = append(a.all, req)
	a.mu.Unlock()

	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		a.messages(w, r, req)
	case r.URL.Path == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		// The CLI's connectivity probe.
		w.WriteHeader(http.StatusOK)
	default:
		writeError(w, http.StatusNotFound, "not_found_error", "fake anthropic: no route for "+r.Method+" "+r.URL.Path)
	}
}

// isMain tells a main-conversation request from an auxiliary one.
//
// Observed with claude 2.1.197 in -p mode: before each run the CLI sends
// HEAD / (a connectivity probe), answered 200 and never scripted (2.1.332
// sends none). Every main-loop request offers the CLI's tools (24 or so,
// Bash among them; 2.1.332 offers 12 and defers the rest behind
// ToolSearch). A subagent's requests look the same: they are main
// requests and take replies from the same script.
// The only auxiliary model call seen is the session-title generation
// (sent only without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC): no tools,
// output_config.format = a JSON schema {"title": string}. Interactive
// builds are known to send a quota probe with max_tokens 1 and no tools.
// So: a request is main when it offers tools, asks for more than one
// token and does not ask for structured output.
func isMain(b requestBody) bool {
	return len(b.Tools) > 0 && b.MaxTokens != 1 && len(b.OutputConfig.Format) == 0
}

func (a *Anthropic) messages(w http.ResponseWriter, r *http.Request, req Request) {
	b := req.body()
	if !isMain(b) {
		a.answer(w, b, auxReply(b))
		return
	}
	a.mu.Lock()
	a.requests = append(a.requests, req)
	reply := a.next(req)
	a.mu.Unlock()
	select {
	case a.arrived <- req:
	default:
	}
	if reply.Hold != nil {
		select {
		case <-reply.Hold:
		case <-r.Context().Done():
			return
		}
	}
	a.answer(w, b, reply)
}

// next returns the reply to main request req, a.mu held: the script's
// next one, or the same refusal for a conversation refused as invalid
// (400, 422) that comes again. As the real API would: Claude Code 2.1.332
// sends a request refused with a 400 five times more, each without one of
// its own novelties in case that was the cause (a beta, the thinking
// display, ToolSearch: then its role "system" message changes), and the
// script is for the model's answers, not for the CLI's recoveries.
func (a *Anthropic) next(req Request) Reply {
	if a.refused != nil && bytes.Equal(a.refused, req.conversation()) {
		return a.refusal
	}
	reply := Reply{Text: []string{DefaultReply}}
	if len(a.script) > 0 {
		reply = a.script[0]
		a.script = a.script[1:]
	}
	a.refused = nil
	if reply.Status == http.StatusBadRequest || reply.Status == http.StatusUnprocessableEntity {
		a.refused, a.refusal = req.conversation(), reply
	}
	return reply
}

// DefaultReply is the text of the reply to a main request that comes
// after the script is exhausted, so that a stray request never hangs.
const DefaultReply = "Fake default reply: the script is exhausted."

// auxReply answers an auxiliary request: JSON with a string for every
// required property when structured output is asked for (the title
// generator wants {"title": ...}), else a short text.
func auxReply(b requestBody) Reply {
	var format struct {
		Schema struct {
			Required []string `json:"required"`
		} `json:"schema"`
	}
	if json.Unmarshal(b.OutputConfig.Format, &format) != nil || len(format.Schema.Required) == 0 {
		return Reply{Text: []string{"Fake auxiliary reply"}}
	}
	obj := map[string]string{}
	for _, name := range format.Schema.Required {
		obj[name] = "Fake " + name
	}
	js, _ := json.Marshal(obj)
	return Reply{Text: []string{string(js)}}
}

// errorTypes maps HTTP statuses to Anthropic's error types.
var errorTypes = map[int]string{
	400: "invalid_request_error",
	401: "authentication_error",
	402: "billing_error",
	403: "permission_error",
	404: "not_found_error",
	413: "request_too_large",
	429: "rate_limit_error",
	500: "api_error",
	504: "timeout_error",
	529: "overloaded_error",
}

// writeError answers in Anthropic's error shape.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": msg},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fakeSignature stands in for the signature of a thinking block, which
// the CLI sends back untouched and never checks.
const fakeSignature = "ZmFrZS1zaWduYXR1cmU="

// blocks returns the content blocks of reply, as the final message holds
// them, and its stop reason.
func (reply Reply) blocks() ([]map[string]any, string) {
	blocks := []map[string]any{}
	if reply.Thinking != "" {
		blocks = append(blocks, map[string]any{"type": "thinking", "thinking": reply.Thinking, "signature": fakeSignature})
	}
	if text := strings.Join(reply.Text, ""); text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": text})
	}
	stop := "end_turn"
	calls := reply.Tools
	if reply.Tool != nil {
		calls = append([]ToolCall{*reply.Tool}, calls...)
	}
	for i, c := range calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("toolu_fake%02d", i+1)
		}
		input := c.Input
		if input == nil {
			input = map[string]any{}
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
		stop = "tool_use"
	}
	return blocks, stop
}

// answer writes reply as a streamed or a plain JSON message, as the
// request asked.
func (a *Anthropic) answer(w http.ResponseWriter, b requestBody, reply Reply) {
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	if reply.Status != 0 {
		typ := errorTypes[reply.Status]
		if typ == "" {
			typ = "api_error"
		}
		msg := reply.Message
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		writeError(w, reply.Status, typ, msg)
		return
	}
	model := b.Model
	if model == "" {
		model = "claude-fake"
	}
	id := fmt.Sprintf("msg_fake%04d", a.msgSeq.Add(1))
	blocks, stop := reply.blocks()
	outTokens := 1
	for _, chunk := range reply.Text {
		outTokens += len(chunk) / 4
	}
	usage := func(out int) map[string]any {
		return map[string]any{"input_tokens": 10, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	}
	if !b.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage(outTokens),
		})
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(http.StatusOK)
	send := sseSender(w)
	send("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(1),
	}})
	for index, block := range blocks {
		streamBlock(send, index, block, reply.Text)
	}
	send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outTokens},
	})
	send("message_stop", map[string]any{})
}

// sseSender returns a function that writes one server-sent event of the
// Messages API and flushes it.
func sseSender(w http.ResponseWriter) func(event string, data map[string]any) {
	flusher, _ := w.(http.Flusher)
	return func(event string, data map[string]any) {
		data["type"] = event
		js, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, js)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// streamBlock streams one content block: its start, its deltas (text in
// the reply's chunks, a tool's input in two pieces), its stop.
func streamBlock(send func(string, map[string]any), index int, block map[string]any, text []string) {
	delta := func(d map[string]any) {
		send("content_block_delta", map[string]any{"index": index, "delta": d})
	}
	switch block["type"] {
	case "thinking":
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		delta(map[string]any{"type": "thinking_delta", "thinking": block["thinking"]})
		delta(map[string]any{"type": "signature_delta", "signature": block["signature"]})
	case "text":
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, chunk := range text {
			if chunk != "" {
				delta(map[string]any{"type": "text_delta", "text": chunk})
			}
		}
	case "tool_use":
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
		js, _ := json.Marshal(block["input"])
		// The real API streams the input JSON in pieces.
		half := len(js) / 2
		delta(map[string]any{"type": "input_json_delta", "partial_json": string(js[:half])})
		delta(map[string]any{"type": "input_json_delta", "partial_json": string(js[half:])})
	}
	send("content_block_stop", map[string]any{"index": index})
}

// ClaudeEnv returns the environment for running the real claude CLI
// against a: os.Environ() without any ANTHROPIC_*, CLAUDE_* or CLAUDECODE
// variable of the developer's (so that their keys, models, config dir or
// a surrounding Claude Code session cannot leak in), plus what keeps the
// CLI offline, fast and deterministic. Use it as cmd.Env directly, or
// append it to os.Environ() (for duplicate keys the last entry wins), and
// append overrides after it, e.g. "CLAUDE_CODE_MAX_RETRIES=2" to test
// retries.
//
// Transcripts land in home/.claude/projects/<encoded workdir>/<id>.jsonl.
// Give the CLI a closed stdin: on an open pipe it waits 3 s for input.
func ClaudeEnv(t testing.TB, a *Anthropic, home string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "HOME" || strings.HasPrefix(name, "ANTHROPIC_") || strings.HasPrefix(name, "CLAUDE_") ||
			strings.HasPrefix(name, "CLAUDECODE") || strings.HasPrefix(name, "DISABLE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "HOME="+home), ClaudeVars(a)...)
}

// ClaudeVars returns the variables ClaudeEnv sets for the real claude CLI
// against a, without the rest of the environment: for a CLI run where
// os.Environ is not its environment (in a container).
func ClaudeVars(a *Anthropic) []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + a.URL,
		"ANTHROPIC_API_KEY=test-key",
		// No title generation, telemetry, update checks, error
		// reporting, release notes or marketplace fetches: only the
		// model API is called.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		// The CLI retries even 401s, with exponential backoff from 0.5 s,
		// 10 times by default: minutes. Tests of errors want one try.
		"CLAUDE_CODE_MAX_RETRIES=0",
	}
}

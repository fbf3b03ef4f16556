package plugintest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Gemini is a fake Gemini API, enough for the Gemini CLI:
// models/<m>:streamGenerateContent?alt=sse and models/<m>:generateContent
// answered from a script of replies, and :countTokens. It records every
// request. It is safe for concurrent use and closes when the test ends.
//
// Observed with gemini 0.61 and an explicit -m: one streamGenerateContent
// per model turn, nothing else. 4xx are not retried, and the process then
// exits with the HTTP status as its code (400 → 144, 401 → 145, 500 → 244:
// the status mod 256). 429 and 5xx are retried 10 times with backoff from
// 5 s up to 30 s, about 4 minutes: script 400 or 401 in tests.
type Gemini struct {
	// URL is the API's base URL (GOOGLE_GEMINI_BASE_URL).
	URL string
	*replyQueue
}

// NewGemini starts a fake Gemini API on 127.0.0.1 that answers each
// generate request, streamed or not, with the next of replies
// (DefaultReply once they run out).
func NewGemini(t testing.TB, replies ...Reply) *Gemini {
	t.Helper()
	g := &Gemini{replyQueue: newReplyQueue(replies)}
	g.URL = startServer(t, g.serve).URL
	return g
}

func (g *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.record(r, body)
	_, method, _ := strings.Cut(r.URL.Path, ":")
	switch {
	case r.Method != http.MethodPost:
		geminiError(w, http.StatusNotFound, "fake: no route for "+r.Method+" "+r.URL.Path)
	case method == "countTokens":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens":%d}`, len(body)/4)
	case method == "streamGenerateContent", method == "generateContent":
		rep := g.next()
		if method == "streamGenerateContent" {
			g.streamPartial(w, r, rep)
		}
		if !waitHold(r, rep) {
			return
		}
		if rep.Status != 0 {
			geminiError(w, rep.Status, rep.Message)
		} else if method == "generateContent" {
			g.generate(w, r, rep)
		} else {
			g.stream(w, r, rep)
		}
	default:
		geminiError(w, http.StatusNotFound, "fake: no route for "+r.URL.Path)
	}
}

func geminiError(w http.ResponseWriter, status int, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": status, "message": msg, "status": statusName(status),
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// statusName is the google.rpc status the real API pairs with an HTTP
// status.
func statusName(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

// modelName is the <m> in .../models/<m>:method.
func modelName(path string) string {
	before, _, _ := strings.Cut(path, ":")
	return before[strings.LastIndexByte(before, '/')+1:]
}

// chunk is one GenerateContentResponse holding parts.
func chunk(model string, parts []any, final bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	c := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": "fake-response"}
	if final {
		cand["finishReason"] = "STOP"
		c["usageMetadata"] = map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}
	}
	return c
}

func toolPart(tc ToolCall) map[string]any {
	args := tc.Input
	if args == nil {
		args = map[string]any{}
	}
	call := map[string]any{"name": tc.Name, "args": args}
	if tc.ID != "" {
		call["id"] = tc.ID
	}
	return map[string]any{"functionCall": call}
}

// stream answers as server-sent events: the thought, one chunk per text
// piece, then the function calls; the last chunk carries finishReason and
// usage.
func (g *Gemini) stream(w http.ResponseWriter, r *http.Request, rep Reply) {
	model := modelName(r.URL.Path)
	var chunks [][]any
	if rep.Thinking != "" {
		chunks = append(chunks, []any{map[string]any{"text": rep.Thinking, "thought": true}})
	}
	for _, text := range rep.Text {
		chunks = append(chunks, []any{map[string]any{"text": text}})
	}
	var calls []any
	for _, tc := range rep.toolCalls() {
		calls = append(calls, toolPart(tc))
	}
	if calls != nil || len(chunks) == 0 {
		if calls == nil {
			calls = []any{map[string]any{"text": ""}}
		}
		chunks = append(chunks, calls)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, parts := range chunks {
		sendEvent(w, "", chunk(model, parts, i == len(chunks)-1))
	}
}

// streamPartial streams rep's Partial text, before its Hold: the start
// of an answer, without a finish reason.
func (g *Gemini) streamPartial(w http.ResponseWriter, r *http.Request, rep Reply) {
	if len(rep.Partial) == 0 {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, text := range rep.Partial {
		sendEvent(w, "", chunk(modelName(r.URL.Path), []any{map[string]any{"text": text}}, false))
	}
}

// generate answers with one JSON response holding every part.
func (g *Gemini) generate(w http.ResponseWriter, r *http.Request, rep Reply) {
	var parts []any
	if rep.Thinking != "" {
		parts = append(parts, map[string]any{"text": rep.Thinking, "thought": true})
	}
	if len(rep.Text) > 0 {
		parts = append(parts, map[string]any{"text": strings.Join(rep.Text, "")})
	}
	for _, tc := range rep.toolCalls() {
		parts = append(parts, toolPart(tc))
	}
	b, _ := json.Marshal(chunk(modelName(r.URL.Path), parts, true))
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// geminiSettings selects API-key auth (so the CLI never starts an OAuth
// flow) and turns off everything that would call Google.
const geminiSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`

// GeminiEnv prepares home for the real Gemini CLI (a settings.json that
// selects API-key auth) and returns the environment that points it at g:
// HOME, GOOGLE_GEMINI_BASE_URL, a fake GEMINI_API_KEY, a trusted
// workspace, and TMPDIR beside home. Pass an explicit -m so that the CLI's
// model router does not call a classifier model first.
func GeminiEnv(t testing.TB, g *Gemini, home string) []string {
	t.Helper()
	writeSettings(t, filepath.Join(home, ".gemini"), geminiSettings)
	return []string{
		"HOME=" + home,
		"GOOGLE_GEMINI_BASE_URL=" + g.URL,
		"GEMINI_API_KEY=fake-key",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"TMPDIR=" + tmpDir(t, home),
		"NO_COLOR=1",
	}
}

// tmpDir returns a temporary directory beside home for a CLI's scratch
// files (Gemini writes error reports there).
func tmpDir(t testing.TB, home string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(home), "tmp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

package plugintest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// OpenAI is a fake OpenAI Responses API, enough for Codex: POST
// /v1/responses answered as a server-sent event stream from a script of
// replies, and GET /v1/models with an empty list. It records every request.
// It is safe for concurrent use and closes when the test ends.
type OpenAI struct {
	// URL is the API's base URL, ending in /v1.
	URL string
	q   *replyQueue
	seq atomic.Int64
}

// NewOpenAI starts a fake Responses API that answers each POST
// /v1/responses with the next of replies.
func NewOpenAI(t testing.TB, replies ...Reply) *OpenAI {
	t.Helper()
	o := &OpenAI{q: newReplyQueue(t, replies)}
	srv := httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(srv.Close)
	o.URL = srv.URL + "/v1"
	return o
}

// Push adds replies to the end of the script.
func (o *OpenAI) Push(replies ...Reply) { o.q.push(replies) }

// Requests returns the requests received so far, oldest first.
func (o *OpenAI) Requests() []Request { return o.q.requests() }

// Arrived delivers each request as it arrives, so a test can wait for one
// without sleeping. It buffers 256 requests and drops any beyond.
func (o *OpenAI) Arrived() <-chan Request { return o.q.arrived }

func (o *OpenAI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	o.q.record(r, body)
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		o.respond(w, r, body)
	default:
		openAIError(w, http.StatusNotFound, "fake: no route for "+r.Method+" "+r.URL.Path)
	}
}

func openAIError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "code": nil,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// respond streams one scripted reply as the Responses API does: created,
// then each output item (added, deltas, done), then completed with usage.
func (o *OpenAI) respond(w http.ResponseWriter, r *http.Request, body []byte) {
	rep := o.q.next(r.URL.Path)
	if rep.Status != 0 {
		openAIError(w, rep.Status, rep.Message)
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	json.Unmarshal(body, &req)
	n := o.seq.Add(1)
	respID := fmt.Sprintf("resp_fake%d", n)
	resp := map[string]any{
		"id": respID, "object": "response", "created_at": 1700000000 + n,
		"status": "in_progress", "model": req.Model, "output": []any{},
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sendEvent(w, "response.created", map[string]any{"type": "response.created", "response": resp})
	waitHold(r, rep)
	if r.Context().Err() != nil {
		return
	}

	var output []any
	if len(rep.Text) > 0 {
		itemID := fmt.Sprintf("msg_fake%d", n)
		idx := len(output)
		sendEvent(w, "response.output_item.added", map[string]any{
			"type": "response.output_item.added", "output_index": idx,
			"item": map[string]any{"id": itemID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}},
		})
		sendEvent(w, "response.content_part.added", map[string]any{
			"type": "response.content_part.added", "item_id": itemID, "output_index": idx, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}},
		})
		for _, chunk := range rep.Text {
			sendEvent(w, "response.output_text.delta", map[string]any{
				"type": "response.output_text.delta", "item_id": itemID, "output_index": idx, "content_index": 0, "delta": chunk,
			})
		}
		text := strings.Join(rep.Text, "")
		sendEvent(w, "response.output_text.done", map[string]any{
			"type": "response.output_text.done", "item_id": itemID, "output_index": idx, "content_index": 0, "text": text,
		})
		item := map[string]any{
			"id": itemID, "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
		}
		sendEvent(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": idx, "item": item})
		output = append(output, item)
	}
	if rep.Tool != nil {
		idx := len(output)
		item := toolItem(rep.Tool, n)
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"] = "in_progress"
		sendEvent(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": idx, "item": added})
		sendEvent(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": idx, "item": item})
		output = append(output, item)
	}
	resp["status"], resp["output"] = "completed", output
	resp["usage"] = map[string]any{
		"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": 110,
	}
	sendEvent(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

// CodexEnv returns the environment for running the real Codex CLI in a
// private home: HOME and CODEX_HOME under home, and TMPDIR beside it so
// nothing lands in the machine's /tmp.
func CodexEnv(t testing.TB, home string) []string {
	t.Helper()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{
		"HOME=" + home,
		"CODEX_HOME=" + codexHome,
		"TMPDIR=" + tmpDir(t, home),
		"NO_COLOR=1",
		"RUST_LOG=error",
	}
}

// CodexArgs returns the -c flags that point Codex at the fake: a provider
// named fake on the Responses wire API, with retries off so a scripted
// error fails the turn at once.
func CodexArgs(o *OpenAI) []string {
	provider := fmt.Sprintf(`model_providers.fake={name="fake",base_url=%q,wire_api="responses",request_max_retries=0,stream_max_retries=0}`, o.URL)
	return []string{"-c", provider, "-c", "model_provider=fake"}
}

// toolItem is the output item for a tool call: a function_call with JSON
// arguments, or, when Input holds only a string "input" (Codex's freeform
// apply_patch), a custom_tool_call carrying that string.
func toolItem(tc *ToolCall, n int64) map[string]any {
	callID := tc.ID
	if callID == "" {
		callID = fmt.Sprintf("call_fake%d", n)
	}
	if in, ok := tc.Input["input"].(string); ok && len(tc.Input) == 1 {
		return map[string]any{
			"id": fmt.Sprintf("ctc_fake%d", n), "type": "custom_tool_call", "status": "completed",
			"call_id": callID, "name": tc.Name, "input": in,
		}
	}
	args, _ := json.Marshal(tc.Input)
	return map[string]any{
		"id": fmt.Sprintf("fc_fake%d", n), "type": "function_call", "status": "completed",
		"call_id": callID, "name": tc.Name, "arguments": string(args),
	}
}

package plugintest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
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
//
// Observed with codex 0.169 and 0.171 and a custom provider: only POST /v1/responses
// is called (stream: true, tools exec_command, apply_patch as a custom
// tool, web_search, …). A 5xx is retried request_max_retries times per
// attempt and the stream stream_max_retries times (defaults 4 and 5: 30
// requests over about 25 s, each reconnect reported as an "error" event);
// CodexArgs turns both off. 4xx are not retried.
type OpenAI struct {
	// URL is the API's base URL, ending in /v1.
	URL string
	*replyQueue
	seq atomic.Int64
}

// NewOpenAI starts a fake Responses API on 127.0.0.1 that answers each
// POST /v1/responses with the next of replies (DefaultReply once they run
// out).
func NewOpenAI(t testing.TB, replies ...Reply) *OpenAI {
	t.Helper()
	o := &OpenAI{replyQueue: newReplyQueue(replies)}
	o.URL = startServer(t, o.serve).URL + "/v1"
	return o
}

func (o *OpenAI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	o.record(r, body)
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		rep := o.next()
		if waitHold(r, rep) {
			o.respond(w, rep, body)
		}
	default:
		openAIError(w, http.StatusNotFound, "fake: no route for "+r.Method+" "+r.URL.Path, "")
	}
}

func openAIError(w http.ResponseWriter, status int, msg, typ string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	if typ == "" {
		typ = "invalid_request_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "code": nil,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// respond streams one reply as the Responses API does: created, then each
// output item (added, deltas, done), then completed with usage.
// fakeUsage is every response's token counts.
var fakeUsage = map[string]any{
	"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
	"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
	"total_tokens": 110,
}

func (o *OpenAI) respond(w http.ResponseWriter, rep Reply, body []byte) {
	for k, v := range rep.Headers {
		w.Header().Set(k, v)
	}
	if rep.Status != 0 {
		openAIError(w, rep.Status, rep.Message, rep.ErrorType)
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	json.Unmarshal(body, &req)
	n := o.seq.Add(1)
	resp := map[string]any{
		"id": fmt.Sprintf("resp_fake%d", n), "object": "response", "created_at": 1700000000 + n,
		"status": "in_progress", "model": req.Model, "output": []any{},
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sendEvent(w, "response.created", map[string]any{"type": "response.created", "response": resp})

	var output []any
	item := func(added, done map[string]any, between func(id any, idx int)) {
		idx := len(output)
		sendEvent(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": idx, "item": added})
		if between != nil {
			between(added["id"], idx)
		}
		sendEvent(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": idx, "item": done})
		output = append(output, done)
	}
	if rep.Thinking != "" {
		id := fmt.Sprintf("rs_fake%d", n)
		summary := []any{map[string]any{"type": "summary_text", "text": rep.Thinking}}
		item(map[string]any{"id": id, "type": "reasoning", "summary": []any{}},
			map[string]any{"id": id, "type": "reasoning", "summary": summary}, nil)
	}
	if len(rep.Text) > 0 {
		id := fmt.Sprintf("msg_fake%d", n)
		text := strings.Join(rep.Text, "")
		item(map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}},
			map[string]any{"id": id, "type": "message", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}},
			func(id any, idx int) { streamText(w, id, idx, rep.Text) })
	}
	for i, tc := range rep.toolCalls() {
		done := toolItem(tc, fmt.Sprintf("%d_%d", n, i))
		added := maps.Clone(done)
		added["status"] = "in_progress"
		item(added, done, nil)
	}
	resp["status"], resp["output"], resp["usage"] = "completed", output, fakeUsage
	sendEvent(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

// streamText streams a message item's text in its chunks.
func streamText(w http.ResponseWriter, id any, idx int, chunks []string) {
	ev := func(typ string, kv ...any) {
		m := map[string]any{"type": typ, "item_id": id, "output_index": idx, "content_index": 0}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		sendEvent(w, typ, m)
	}
	ev("response.content_part.added", "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}})
	for _, chunk := range chunks {
		ev("response.output_text.delta", "delta", chunk)
	}
	ev("response.output_text.done", "text", strings.Join(chunks, ""))
}

// toolItem is the output item for a tool call: a function_call with JSON
// arguments, or, when Input holds only a string "input" (Codex's freeform
// apply_patch), a custom_tool_call carrying that string.
func toolItem(tc ToolCall, n string) map[string]any {
	callID := tc.ID
	if callID == "" {
		callID = "call_fake" + n
	}
	if in, ok := tc.Input["input"].(string); ok && len(tc.Input) == 1 {
		return map[string]any{
			"id": "ctc_fake" + n, "type": "custom_tool_call", "status": "completed",
			"call_id": callID, "name": tc.Name, "input": in,
		}
	}
	input := tc.Input
	if input == nil {
		input = map[string]any{}
	}
	args, _ := json.Marshal(input)
	item := map[string]any{
		"id": "fc_fake" + n, "type": "function_call", "status": "completed",
		"call_id": callID, "name": tc.Name, "arguments": string(args),
	}
	if tc.Namespace != "" {
		item["namespace"] = tc.Namespace
	}
	return item
}

// CodexEnv returns the environment for running the real Codex CLI in a
// private home: HOME and CODEX_HOME under home, and TMPDIR beside it so
// nothing lands in the machine's /tmp. Append it to os.Environ().
//
// Rollouts land in home/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl. Give
// the CLI a closed stdin: on an open pipe `codex exec` waits for EOF.
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
		"OPENAI_API_KEY=",
		"NO_COLOR=1",
		"RUST_LOG=error",
	}
}

// CodexArgs returns the -c flags that point Codex at o: a provider named
// fake on the Responses wire API, with retries off so a scripted error
// fails the turn at once. Pass a model Codex knows (gpt-5.5), or its
// first event is a "Model metadata … not found" warning.
func CodexArgs(o *OpenAI) []string {
	provider := fmt.Sprintf(`model_providers.fake={name="fake",base_url=%q,wire_api="responses",request_max_retries=0,stream_max_retries=0}`, o.URL)
	return []string{"-c", provider, "-c", "model_provider=fake"}
}

package plugintest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// These tests check the OpenAI and Gemini fakes at the HTTP level, without
// the CLIs; fakes_test.go runs the real CLIs against them.

func TestOpenAIStream(t *testing.T) {
	t.Parallel()
	o := NewOpenAI(t, Reply{
		Thinking: "pondering",
		Text:     []string{"Hel", "lo"},
		Tool:     &ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "ls"}},
		Tools:    []ToolCall{{ID: "call_x", Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n"}}},
	})
	resp := post(t, context.Background(), o.URL+"/responses", `{"model":"gpt-5.5","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := sse(t, resp.Body)
	var kinds []string
	var text string
	for _, e := range events {
		kind := e["type"].(string)
		if item, ok := e["item"].(map[string]any); ok {
			kind += "/" + item["type"].(string)
		}
		kinds = append(kinds, kind)
		text += str(e["delta"])
	}
	want := []string{"response.created",
		"response.output_item.added/reasoning", "response.output_item.done/reasoning",
		"response.output_item.added/message", "response.content_part.added", "response.output_text.delta",
		"response.output_text.delta", "response.output_text.done", "response.output_item.done/message",
		"response.output_item.added/function_call", "response.output_item.done/function_call",
		"response.output_item.added/custom_tool_call", "response.output_item.done/custom_tool_call",
		"response.completed"}
	if !slices.Equal(kinds, want) {
		t.Errorf("events = %q\nwant     %q", kinds, want)
	}
	if text != "Hello" {
		t.Errorf("streamed text = %q, want Hello", text)
	}
	output := events[len(events)-1]["response"].(map[string]any)["output"].([]any)
	call, custom := output[2].(map[string]any), output[3].(map[string]any)
	if call["arguments"] != `{"cmd":"ls"}` || call["name"] != "exec_command" || call["call_id"] == "" {
		t.Errorf("function call = %v", call)
	}
	if custom["input"] != "*** Begin Patch\n" || custom["call_id"] != "call_x" {
		t.Errorf("custom tool call = %v", custom)
	}
	if reqs := o.Requests(); len(reqs) != 1 || reqs[0].Text() != "hi\n" {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestOpenAIErrorsAndDefault(t *testing.T) {
	t.Parallel()
	o := NewOpenAI(t, Reply{Status: 401, Message: "bad key"})
	resp := post(t, context.Background(), o.URL+"/responses", `{}`)
	var body struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 401 || body.Error.Message != "bad key" {
		t.Errorf("error reply: %d %+v %v", resp.StatusCode, body, err)
	}
	// With the script exhausted, the default reply.
	if b, _ := io.ReadAll(post(t, context.Background(), o.URL+"/responses", `{}`).Body); !strings.Contains(string(b), DefaultReply) {
		t.Errorf("default reply: %s", b)
	}
	if r, err := http.Get(o.URL + "/models"); err != nil || r.StatusCode != 200 {
		t.Errorf("GET /models: %v %v", r, err)
	} else {
		r.Body.Close()
	}
}

// geminiChunks reads a Gemini SSE stream: data lines only.
func geminiChunks(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var chunks []map[string]any
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var c map[string]any
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("bad data line %q: %v", data, err)
			}
			chunks = append(chunks, c)
		}
	}
	return chunks
}

func parts(c map[string]any) []any {
	cand := c["candidates"].([]any)[0].(map[string]any)
	return cand["content"].(map[string]any)["parts"].([]any)
}

func TestGeminiStream(t *testing.T) {
	t.Parallel()
	g := NewGemini(t,
		Reply{Thinking: "hmm", Text: []string{"Hel", "lo"}, Tool: &ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "ls"}}},
		Reply{Text: []string{"whole"}},
	)
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"x","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"x","response":{"output":"done"}}}]}]}`
	resp := post(t, context.Background(), g.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", body)
	chunks := geminiChunks(t, resp.Body)
	if len(chunks) != 4 {
		t.Fatalf("%d chunks, want thought, 2 texts, call", len(chunks))
	}
	if p := parts(chunks[0])[0].(map[string]any); p["thought"] != true || p["text"] != "hmm" {
		t.Errorf("first part = %v, want the thought", p)
	}
	if parts(chunks[1])[0].(map[string]any)["text"] != "Hel" || parts(chunks[2])[0].(map[string]any)["text"] != "lo" {
		t.Errorf("text chunks = %v %v", chunks[1], chunks[2])
	}
	last := chunks[3]
	call := parts(last)[0].(map[string]any)["functionCall"].(map[string]any)
	if call["name"] != "run_shell_command" || last["candidates"].([]any)[0].(map[string]any)["finishReason"] != "STOP" || last["usageMetadata"] == nil {
		t.Errorf("last chunk = %v", last)
	}
	if got := g.Requests()[0].Text(); got != "hi\ndone\n" {
		t.Errorf("Request.Text = %q, want the user text and the tool output", got)
	}

	resp = post(t, context.Background(), g.URL+"/v1beta/models/gemini-2.5-flash:generateContent", `{}`)
	var one map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&one); err != nil || parts(one)[0].(map[string]any)["text"] != "whole" {
		t.Errorf("generateContent = %v, %v", one, err)
	}
	resp = post(t, context.Background(), g.URL+"/v1beta/models/gemini-2.5-flash:countTokens", `{"contents":[]}`)
	var count map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&count); err != nil || count["totalTokens"] == nil {
		t.Errorf("countTokens = %v, %v", count, err)
	}
}

func TestGeminiError(t *testing.T) {
	t.Parallel()
	g := NewGemini(t, Reply{Status: 400, Message: "API key not valid."})
	resp := post(t, context.Background(), g.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", `{}`)
	var body struct {
		Error struct {
			Code    int
			Message string
			Status  string
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 400 ||
		body.Error.Code != 400 || body.Error.Status != "INVALID_ARGUMENT" || body.Error.Message != "API key not valid." {
		t.Errorf("error reply: %d %+v %v", resp.StatusCode, body, err)
	}
}

// TestFakesHold checks that a held reply waits for its channel, and gives
// up when the client goes away.
func TestFakesHold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		new  func(Reply) (url string, arrived <-chan Request)
	}{
		{"openai", func(r Reply) (string, <-chan Request) {
			o := NewOpenAI(t, r, Reply{Text: []string{"never"}, Hold: make(chan struct{})})
			return o.URL + "/responses", o.Arrived()
		}},
		{"gemini", func(r Reply) (string, <-chan Request) {
			g := NewGemini(t, r, Reply{Text: []string{"never"}, Hold: make(chan struct{})})
			return g.URL + "/v1beta/models/m:streamGenerateContent?alt=sse", g.Arrived()
		}},
	} {
		hold := make(chan struct{})
		url, arrived := tc.new(Reply{Text: []string{"slow"}, Hold: hold})
		done := make(chan string)
		go func() {
			resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
			if err != nil {
				done <- err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			done <- string(b)
		}()
		<-arrived
		close(hold)
		if got := <-done; !strings.Contains(got, "slow") {
			t.Errorf("%s: held reply: %s", tc.name, got)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{}`))
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		<-arrived
		cancel()
		if err := <-errc; err == nil {
			t.Errorf("%s: cancelled request succeeded", tc.name)
		}
	}
}

// TestGeminiPartial checks that the Gemini fake streams a reply's Partial
// text before its Hold, without a finish reason, and the rest after.
func TestGeminiPartial(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	g := NewGemini(t, Reply{Partial: []string{"Pineapples are "}, Text: []string{"sweet."}, Hold: hold})
	resp := post(t, context.Background(), g.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", `{}`)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	first, err := r.ReadString('\n')
	if err != nil || !strings.Contains(first, `"Pineapples are "`) || strings.Contains(first, "finishReason") {
		t.Fatalf("first event %q, %v; want the partial text, unfinished", first, err)
	}
	close(hold)
	rest, _ := io.ReadAll(r)
	if !strings.Contains(string(rest), `"sweet."`) || !strings.Contains(string(rest), `"finishReason":"STOP"`) {
		t.Errorf("after the hold %q, want the rest, finished", rest)
	}
}

package plugintest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// mainBody is a request as the CLI's main loop sends it: with tools.
const mainBody = `{"model":"claude-test","max_tokens":100,"stream":%s,"tools":[{"name":"Bash"}],` +
	`"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}`

func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func mainRequest(stream bool) string {
	return strings.Replace(mainBody, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
}

// sse reads a server-sent event stream into its data objects.
func sse(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var events []map[string]any
	sc := bufio.NewScanner(r)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if data["type"] != event {
				t.Errorf("event %q carries type %v", event, data["type"])
			}
			events = append(events, data)
		}
	}
	return events
}

// summary reduces events to "type" or "type/delta type" words, and
// reassembles the streamed text, thinking and tool input.
func summary(events []map[string]any) (kinds []string, text, thinking, input string) {
	for _, e := range events {
		kind := e["type"].(string)
		switch kind {
		case "content_block_start":
			kind += "/" + e["content_block"].(map[string]any)["type"].(string)
		case "content_block_delta":
			d := e["delta"].(map[string]any)
			kind += "/" + d["type"].(string)
			text += str(d["text"])
			thinking += str(d["thinking"])
			input += str(d["partial_json"])
		case "message_delta":
			kind += "/" + e["delta"].(map[string]any)["stop_reason"].(string)
		}
		kinds = append(kinds, kind)
	}
	return kinds, text, thinking, input
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func TestAnthropicStream(t *testing.T) {
	tests := []struct {
		name                   string
		reply                  Reply
		kinds                  []string
		text, thinking, inputs string
	}{
		{
			name:  "text",
			reply: Reply{Text: []string{"Hel", "lo"}},
			kinds: []string{"message_start", "content_block_start/text", "content_block_delta/text_delta",
				"content_block_delta/text_delta", "content_block_stop", "message_delta/end_turn", "message_stop"},
			text: "Hello",
		},
		{
			name:  "text and tool",
			reply: Reply{Text: []string{"Running."}, Tool: &ToolCall{ID: "toolu_1", Name: "Bash", Input: map[string]any{"command": "ls"}}},
			kinds: []string{"message_start", "content_block_start/text", "content_block_delta/text_delta", "content_block_stop",
				"content_block_start/tool_use", "content_block_delta/input_json_delta", "content_block_delta/input_json_delta",
				"content_block_stop", "message_delta/tool_use", "message_stop"},
			text:   "Running.",
			inputs: `{"command":"ls"}`,
		},
		{
			name: "thinking and parallel tools",
			reply: Reply{Thinking: "hmm", Tool: &ToolCall{Name: "Bash", Input: map[string]any{"command": "a"}},
				Tools: []ToolCall{{Name: "Read", Input: map[string]any{"file_path": "/x"}}}},
			kinds: []string{"message_start", "content_block_start/thinking", "content_block_delta/thinking_delta",
				"content_block_delta/signature_delta", "content_block_stop",
				"content_block_start/tool_use", "content_block_delta/input_json_delta", "content_block_delta/input_json_delta", "content_block_stop",
				"content_block_start/tool_use", "content_block_delta/input_json_delta", "content_block_delta/input_json_delta", "content_block_stop",
				"message_delta/tool_use", "message_stop"},
			thinking: "hmm",
			inputs:   `{"command":"a"}{"file_path":"/x"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAnthropic(t, tt.reply)
			resp := post(t, context.Background(), a.URL+"/v1/messages", mainRequest(true))
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("content type %q", ct)
			}
			kinds, text, thinking, inputs := summary(sse(t, resp.Body))
			if !reflect.DeepEqual(kinds, tt.kinds) {
				t.Errorf("events\n got %q\nwant %q", kinds, tt.kinds)
			}
			if text != tt.text || thinking != tt.thinking || inputs != tt.inputs {
				t.Errorf("text %q thinking %q inputs %q, want %q %q %q", text, thinking, inputs, tt.text, tt.thinking, tt.inputs)
			}
			if n := len(a.Requests()); n != 1 {
				t.Errorf("%d main requests recorded, want 1", n)
			}
		})
	}
}

func TestAnthropicJSON(t *testing.T) {
	a := NewAnthropic(t, Reply{Text: []string{"Hel", "lo"}, Tool: &ToolCall{ID: "toolu_1", Name: "Bash", Input: map[string]any{"command": "ls"}}})
	resp := post(t, context.Background(), a.URL+"/v1/messages", mainRequest(false))
	var msg struct {
		Type       string           `json:"type"`
		Role       string           `json:"role"`
		Model      string           `json:"model"`
		StopReason string           `json:"stop_reason"`
		Content    []map[string]any `json:"content"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"type": "text", "text": "Hello"},
		{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "ls"}},
	}
	if msg.Type != "message" || msg.Role != "assistant" || msg.Model != "claude-test" || msg.StopReason != "tool_use" ||
		!reflect.DeepEqual(msg.Content, want) {
		t.Errorf("got %+v", msg)
	}
}

func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		status  int
		message string
		typ     string
		wantMsg string
	}{
		{400, "prompt is too long", "invalid_request_error", "prompt is too long"},
		{401, "invalid x-api-key", "authentication_error", "invalid x-api-key"},
		{500, "", "api_error", "Internal Server Error"},
		{529, "Overloaded", "overloaded_error", "Overloaded"},
	}
	for _, tt := range tests {
		a := NewAnthropic(t, Reply{Status: tt.status, Message: tt.message})
		resp := post(t, context.Background(), a.URL+"/v1/messages", mainRequest(true))
		var body struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.status || body.Type != "error" || body.Error.Type != tt.typ || body.Error.Message != tt.wantMsg {
			t.Errorf("status %d: got %d %+v", tt.status, resp.StatusCode, body)
		}
	}
}

func TestAnthropicAuxiliaryAndDefault(t *testing.T) {
	a := NewAnthropic(t, Reply{Text: []string{"scripted"}})
	ctx := context.Background()

	// A title request: no tools, structured output. It is answered with
	// JSON and neither consumes the script nor counts as main.
	title := `{"model":"m","max_tokens":100,"stream":false,"messages":[{"role":"user","content":"x"}],` +
		`"output_config":{"format":{"type":"json_schema","schema":{"type":"object","required":["title"]}}}}`
	var msg struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.NewDecoder(post(t, ctx, a.URL+"/v1/messages", title).Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != `{"title":"Fake title"}` {
		t.Errorf("title reply %+v", msg)
	}
	// The quota probe.
	post(t, ctx, a.URL+"/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)

	for _, want := range []string{"scripted", DefaultReply} {
		_, text, _, _ := summary(sse(t, post(t, ctx, a.URL+"/v1/messages", mainRequest(true)).Body))
		if text != want {
			t.Errorf("got %q, want %q", text, want)
		}
	}
	a.Push(Reply{Text: []string{"pushed"}})
	if _, text, _, _ := summary(sse(t, post(t, ctx, a.URL+"/v1/messages", mainRequest(true)).Body)); text != "pushed" {
		t.Errorf("got %q after Push", text)
	}

	var count struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(post(t, ctx, a.URL+"/v1/messages/count_tokens", mainRequest(false)).Body).Decode(&count); err != nil || count.InputTokens <= 0 {
		t.Errorf("count_tokens: %+v %v", count, err)
	}
	if resp := post(t, ctx, a.URL+"/v1/other", "{}"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	if got := len(a.Requests()); got != 3 {
		t.Errorf("%d main requests, want 3", got)
	}
	if got := len(a.AllRequests()); got != 7 {
		t.Errorf("%d requests in all, want 7", got)
	}
	r := a.Requests()[0]
	if r.Text() != "hello\n" || r.LastUserText() != "hello\n" || r.Model() != "claude-test" ||
		!reflect.DeepEqual(r.Tools(), []string{"Bash"}) || !reflect.DeepEqual(r.Turns(), []string{"user"}) {
		t.Errorf("request helpers: %q %q %q %v %v", r.Text(), r.LastUserText(), r.Model(), r.Tools(), r.Turns())
	}
}

func TestAnthropicHold(t *testing.T) {
	hold := make(chan struct{})
	a := NewAnthropic(t, Reply{Text: []string{"slow"}, Hold: hold}, Reply{Text: []string{"never"}, Hold: make(chan struct{})})

	done := make(chan string)
	go func() {
		resp, err := http.Post(a.URL+"/v1/messages", "application/json", strings.NewReader(mainRequest(false)))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- string(b)
	}()
	<-a.Arrived() // the request is in, and held
	close(hold)
	if got := <-done; !strings.Contains(got, "slow") {
		t.Errorf("held reply: %s", got)
	}

	// A held reply gives up when the client goes away.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.URL+"/v1/messages", strings.NewReader(mainRequest(true)))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-a.Arrived()
	cancel()
	if err := <-errc; err == nil {
		t.Error("cancelled request succeeded")
	}
}

// TestAnthropicRefusesAgain: a request refused as invalid is refused again
// when it comes back unchanged (Claude Code resends it without a beta),
// while a transient error is not repeated and a changed request goes on
// with the script.
func TestAnthropicRefusesAgain(t *testing.T) {
	other := strings.Replace(mainRequest(true), "hello", "hello again", 1)
	withSystem := func(text string) string {
		return strings.Replace(mainRequest(true), `]}]}`, `]},{"role":"system","content":[{"type":"text","text":"`+text+`"}]}]}`, 1)
	}
	tests := []struct {
		name   string
		reply  Reply
		bodies []string
		want   []int
	}{
		{"400 resent", Reply{Status: 400, Message: "bad"}, []string{mainRequest(true), mainRequest(true), other}, []int{400, 400, 200}},
		{"400 resent changed", Reply{Status: 400, Message: "bad"}, []string{mainRequest(true), strings.Replace(mainRequest(true), `"max_tokens":100`, `"max_tokens":99`, 1)}, []int{400, 400}},
		{"400 resent, instructions changed", Reply{Status: 400, Message: "bad"}, []string{withSystem("a"), withSystem("b")}, []int{400, 400}},
		{"422 resent", Reply{Status: 422, Message: "bad"}, []string{mainRequest(true), mainRequest(true)}, []int{422, 422}},
		{"529 retried", Reply{Status: 529, Message: "Overloaded"}, []string{mainRequest(true), mainRequest(true)}, []int{529, 200}},
		{"400 then changed", Reply{Status: 400, Message: "bad"}, []string{mainRequest(true), other, mainRequest(true)}, []int{400, 200, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAnthropic(t, tt.reply, Reply{Text: []string{"next"}})
			var got []int
			for _, body := range tt.bodies {
				got = append(got, post(t, context.Background(), a.URL+"/v1/messages", body).StatusCode)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("statuses %v, want %v", got, tt.want)
			}
			if n := len(a.Requests()); n != len(tt.bodies) {
				t.Errorf("%d main requests recorded, want %d", n, len(tt.bodies))
			}
		})
	}
}

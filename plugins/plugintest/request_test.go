package plugintest

import (
	"slices"
	"testing"
)

// ToolOutputs reads the tools' answers, and not the model's arguments,
// in each API's shape.
func TestRequestToolOutputs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		api, body string
		want      []string
	}{
		{"anthropic", `{"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"x","input":{"a":"asked"}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"answered"}]},{"type":"text","text":"go on"}]}]}`,
			[]string{"answered\n"}},
		{"responses", `{"input":[{"type":"function_call","name":"x","arguments":"{\"a\":\"asked\"}"},` +
			`{"type":"function_call_output","call_id":"c1","output":"answered"},{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"listed"}]}]}`,
			[]string{"answered", `[{"type":"input_text","text":"listed"}]`}},
		{"responses, string input", `{"input":"hi"}`, nil},
		{"gemini", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"x","args":{"a":"asked"}}}]},` +
			`{"role":"user","parts":[{"functionResponse":{"name":"x","response":{"output":"answered"}}}]}]}`,
			[]string{`{"output":"answered"}`}},
	} {
		if got := (Request{Body: []byte(c.body)}).ToolOutputs(); !slices.Equal(got, c.want) {
			t.Errorf("%s: ToolOutputs = %q, want %q", c.api, got, c.want)
		}
	}
}

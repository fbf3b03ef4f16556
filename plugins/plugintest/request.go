package plugintest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	Body   []byte
	Header http.Header
}

// requestBody is the part of a Messages API request the fake looks at.
type requestBody struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	// OutputConfig.Format is set when structured output is asked for.
	OutputConfig struct {
		Format json.RawMessage `json:"format"`
	} `json:"output_config"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func (r Request) body() requestBody {
	var b requestBody
	_ = json.Unmarshal(r.Body, &b)
	return b
}

// conversation returns the user and assistant messages the request
// sends, as sent: what the model is asked to answer, without the
// instructions Claude Code puts in messages of role "system" (which it
// rewrites when it resends a request, see Anthropic.next).
func (r Request) conversation() []byte {
	var b struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(r.Body, &b)
	kept := []json.RawMessage{}
	for _, m := range b.Messages {
		var msg struct {
			Role string `json:"role"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Role != "system" {
			kept = append(kept, m)
		}
	}
	js, _ := json.Marshal(kept)
	return js
}

// Model is the model the request asked for: in its body (Anthropic,
// OpenAI), or in its path (Gemini's models/<m>:method).
func (r Request) Model() string {
	if m := r.body().Model; m != "" {
		return m
	}
	if strings.Contains(r.Path, "/models/") {
		return modelName(r.Path)
	}
	return ""
}

// Tools lists the names of the tools the request offered the model.
func (r Request) Tools() []string {
	var names []string
	for _, t := range r.body().Tools {
		names = append(names, t.Name)
	}
	return names
}

// Turns returns the role of each message in the request, in order.
func (r Request) Turns() []string {
	var roles []string
	for _, m := range r.body().Messages {
		roles = append(roles, m.Role)
	}
	return roles
}

// Text returns the text of every message in the request (text blocks,
// tool_use inputs and tool_result contents; for Gemini and OpenAI requests
// the same from contents or input), one per line, so that a test can
// assert that a resumed turn sent the earlier exchange.
func (r Request) Text() string {
	var sb strings.Builder
	for _, m := range r.body().Messages {
		writeContent(&sb, m.Content)
	}
	otherText(&sb, r.Body)
	return sb.String()
}

// LastUserText returns the text of the last user message: the prompt of
// the turn, or the tool results it sends back.
func (r Request) LastUserText() string {
	msgs := r.body().Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			var sb strings.Builder
			writeContent(&sb, msgs[i].Content)
			return sb.String()
		}
	}
	return ""
}

// writeContent writes a message's content, a string or a list of blocks.
func writeContent(sb *strings.Builder, raw json.RawMessage) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		sb.WriteString(s)
		sb.WriteByte('\n')
		return
	}
	var blocks []contentBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			sb.WriteString(b.Text)
			sb.WriteByte('\n')
		case "tool_use":
			fmt.Fprintf(sb, "%s %s\n", b.Name, b.Input)
		case "tool_result":
			writeContent(sb, b.Content)
		}
	}
}

// ToolOutputs returns what the request sends back of the model's tool
// calls so far, in order, without their arguments: the contents of
// Anthropic tool_result blocks, the output of Responses API
// function_call_output items (as sent: a string, or its JSON), and each
// Gemini functionResponse's response as JSON. A test reads in them
// what a tool answered, apart from what the model asked of it.
func (r Request) ToolOutputs() []string {
	var out []string
	for _, m := range r.body().Messages {
		var blocks []contentBlock
		_ = json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "tool_result" {
				var sb strings.Builder
				writeContent(&sb, b.Content)
				out = append(out, sb.String())
			}
		}
	}
	var other struct {
		Input    json.RawMessage `json:"input"`
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	_ = json.Unmarshal(r.Body, &other)
	var items []struct {
		Type   string          `json:"type"`
		Output json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(other.Input, &items) // a string input has none
	for _, it := range items {
		if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
			var s string
			if json.Unmarshal(it.Output, &s) != nil {
				s = string(it.Output)
			}
			out = append(out, s)
		}
	}
	for _, c := range other.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				out = append(out, string(p.FunctionResponse.Response))
			}
		}
	}
	return out
}

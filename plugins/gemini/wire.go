package gemini

import "encoding/json"

// event is one line of `gemini -o stream-json`, tagged by type. One struct
// for every type keeps decoding to a single pass; fields a type does not
// use stay zero. Unknown fields are ignored.
type event struct {
	Type string `json:"type"`
	// init
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	// message
	Role    string `json:"role"`
	Content string `json:"content"`
	Delta   bool   `json:"delta"`
	// tool_use and tool_result
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     string          `json:"output"`
	// Error is set for a failed tool_result or result.
	Error *errorInfo `json:"error"`
	// error
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// result
	Stats *stats `json:"stats"`
}

type errorInfo struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// stats cover this process only, not the whole session.
type stats struct {
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	DurationMS   float64 `json:"duration_ms"`
}

package gemini

import (
	"bytes"

	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// event is one line of `gemini -o stream-json`, tagged by type. One struct
// for every type; fields a type does not use stay zero.
type event struct {
	Type string `json:"type"`
	// init
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	// message
	Role    string `json:"role"`
	Content string `json:"content"`
	Delta   bool   `json:"delta"`
	// tool_use and tool_result. Parameters points into the line and is
	// valid only while it is parsed.
	ToolName   string `json:"tool_name"`
	ToolID     string `json:"tool_id"`
	Parameters []byte `json:"parameters"`
	Status     string `json:"status"`
	Output     string `json:"output"`
	// Error is set for a failed tool_result or result.
	Error *errorInfo
	// error
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// result
	Stats *stats
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

// decode reads one line into ev. It is false for anything but a whole
// JSON object; unknown fields are ignored and a field of an unexpected
// type is left zero. Decoding only what is used, it is several times
// faster than encoding/json (see BenchmarkParse).
func decode(line []byte, ev *event) bool {
	return jsonscan.Decode(bytes.TrimSpace(line), ev, func(key, v []byte) {
		if v[0] != '{' {
			return
		}
		switch string(key) {
		case "error":
			ev.Error = &errorInfo{}
			jsonscan.Decode(v, ev.Error, nil)
		case "stats":
			ev.Stats = &stats{}
			jsonscan.Decode(v, ev.Stats, nil)
		}
	})
}

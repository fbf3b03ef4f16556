package gemini

import (
	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// event is one line of `gemini -o stream-json`, tagged by type. One struct
// for every type; fields a type does not use stay zero.
type event struct {
	Type string
	// init
	SessionID string
	Model     string
	// message
	Role    string
	Content string
	Delta   bool
	// tool_use and tool_result. Parameters points into the line and is
	// valid only while it is parsed.
	ToolName   string
	ToolID     string
	Parameters []byte
	Status     string
	Output     string
	// Error is set for a failed tool_result or result.
	Error *errorInfo
	// error
	Severity string
	Message  string
	// result
	Stats *stats
}

type errorInfo struct {
	Type, Message string
}

// stats cover this process only, not the whole session.
type stats struct {
	InputTokens, OutputTokens int
	DurationMS                float64
}

// decode reads one line into ev. It is false for anything but a whole
// JSON object; unknown fields are ignored and a field of an unexpected
// type is left zero. This hand-written decoder is several times faster
// than encoding/json (see BenchmarkParse).
func decode(line []byte, ev *event) bool {
	o := jsonscan.NewObject(line)
	for o.Next() {
		v := o.Value()
		switch string(o.Key()) {
		case "type":
			ev.Type = str(v)
		case "session_id":
			ev.SessionID = str(v)
		case "model":
			ev.Model = str(v)
		case "role":
			ev.Role = str(v)
		case "content":
			ev.Content = str(v)
		case "delta":
			ev.Delta = jsonscan.Bool(v)
		case "tool_name":
			ev.ToolName = str(v)
		case "tool_id":
			ev.ToolID = str(v)
		case "parameters":
			ev.Parameters = v
		case "status":
			ev.Status = str(v)
		case "output":
			ev.Output = str(v)
		case "error":
			if v[0] == '{' {
				ev.Error = &errorInfo{Type: jsonscan.StringField(v, "type"), Message: jsonscan.StringField(v, "message")}
			}
		case "severity":
			ev.Severity = str(v)
		case "message":
			ev.Message = str(v)
		case "stats":
			if v[0] == '{' {
				ev.Stats = decodeStats(v)
			}
		}
	}
	// A line cut short by a dying process is not an event.
	return o.Closed() && o.End() == len(line)
}

func decodeStats(obj []byte) *stats {
	s := &stats{}
	for o := jsonscan.NewObject(obj); o.Next(); {
		switch string(o.Key()) {
		case "input_tokens":
			s.InputTokens, _ = jsonscan.Int(o.Value())
		case "output_tokens":
			s.OutputTokens, _ = jsonscan.Int(o.Value())
		case "duration_ms":
			s.DurationMS, _ = jsonscan.Float(o.Value())
		}
	}
	return s
}

func str(raw []byte) string {
	s, _ := jsonscan.String(raw)
	return s
}

package codex

import (
	"bytes"

	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// event is one line of `codex exec --json` (a ThreadEvent, tagged by
// type). One struct for every type; fields a type does not use stay zero.
type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	// Item is set for item.started, item.updated and item.completed.
	Item *item
	// Usage is set for turn.completed.
	Usage *usage
	// Error is set for turn.failed.
	Error *errorInfo
	// Message is set for a top-level error (often only a warning).
	Message string `json:"message"`
	// ItemID and Delta are set for item.plan.delta.
	ItemID string `json:"item_id"`
	Delta  string `json:"delta"`
}

type usage struct {
	InputTokens       int `json:"input_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	OutputTokens      int `json:"output_tokens"`
}

type errorInfo struct {
	Message string `json:"message"`
}

// item is a ThreadItem; Type says which fields are set. Raw values point
// into the line and are valid only while it is parsed.
type item struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	// agent_message, reasoning, plan
	Text string `json:"text"`
	// command_execution; ExitCode is nil while the command runs.
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int
	// file_change
	Changes []change
	// mcp_tool_call
	Server    string   `json:"server"`
	Tool      string   `json:"tool"`
	Arguments []byte   `json:"arguments"`
	Result    []string // the result's text contents
	Error     *errorInfo
	// collab_tool_call
	Prompt string `json:"prompt"`
	// web_search
	Query       string `json:"query"`
	ActionQuery string
	ActionURL   string
	// todo_list
	Items []todo
	// error
	Message string `json:"message"`
}

type change struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	Diff string `json:"diff"`
	// MovePath is where an update moved the file, in builds that say so.
	MovePath string `json:"move_path"`
}

type todo struct {
	Text      string `json:"text"`
	Completed bool   `json:"completed"`
}

// decode reads one line into ev. It is false for anything but a whole
// JSON object; unknown fields are ignored and a field of an unexpected
// type is left zero. Decoding only what is used, it is several times
// faster than encoding/json (see BenchmarkParse).
func decode(line []byte, ev *event) bool {
	return jsonscan.Decode(bytes.TrimSpace(line), ev, func(key, v []byte) {
		switch string(key) {
		case "item":
			if v[0] == '{' {
				ev.Item = decodeItem(v)
			}
		case "usage":
			if v[0] == '{' {
				ev.Usage = &usage{}
				jsonscan.Decode(v, ev.Usage, nil)
			}
		case "error":
			ev.Error = decodeError(v)
		}
	})
}

func decodeError(v []byte) *errorInfo {
	if v[0] != '{' {
		return nil
	}
	return &errorInfo{Message: jsonscan.StringField(v, "message")}
}

// decodeItem reads an item; web_search items carry the key "id" twice
// (item_N, then the raw id), and as with encoding/json the last one wins.
func decodeItem(obj []byte) *item {
	it := &item{}
	jsonscan.Decode(obj, it, func(key, v []byte) {
		switch string(key) {
		case "exit_code":
			if n, ok := jsonscan.Int(v); ok {
				it.ExitCode = &n
			}
		case "error":
			it.Error = decodeError(v)
		case "changes":
			it.Changes = jsonscan.DecodeElements[change](v)
		case "result":
			for c := range jsonscan.Elements(jsonscan.Value(jsonscan.Field(v, "content"))) {
				if t := jsonscan.StringField(c, "text"); t != "" {
					it.Result = append(it.Result, t)
				}
			}
		case "items":
			it.Items = jsonscan.DecodeElements[todo](v)
		case "action":
			it.ActionQuery = jsonscan.StringField(v, "query")
			it.ActionURL = jsonscan.StringField(v, "url")
		}
	})
	return it
}

package codex

import (
	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// event is one line of `codex exec --json` (a ThreadEvent, tagged by
// type). One struct for every type; fields a type does not use stay zero.
type event struct {
	Type     string
	ThreadID string
	// Item is set for item.started, item.updated and item.completed.
	Item *item
	// Usage is set for turn.completed.
	Usage *usage
	// Error is set for turn.failed.
	Error *errorInfo
	// Message is set for a top-level error (often only a warning).
	Message string
	// ItemID and Delta are set for item.plan.delta.
	ItemID string
	Delta  string
}

type usage struct {
	InputTokens       int
	CachedInputTokens int
	OutputTokens      int
}

type errorInfo struct {
	Message string
}

// item is a ThreadItem; Type says which fields are set. Raw values point
// into the line and are valid only while it is parsed.
type item struct {
	ID     string
	Type   string
	Status string
	// agent_message, reasoning, plan
	Text string
	// command_execution; ExitCode is nil while the command runs.
	Command          string
	AggregatedOutput string
	ExitCode         *int
	// file_change
	Changes []change
	// mcp_tool_call
	Server    string
	Tool      string
	Arguments []byte
	Result    []string // the result's text contents
	Error     *errorInfo
	// collab_tool_call
	Prompt string
	// web_search
	Query       string
	ActionQuery string
	ActionURL   string
	// todo_list
	Items []todo
	// error
	Message string
}

type change struct {
	Path, Kind, Diff string
	// MovePath is where an update moved the file, in builds that say so.
	MovePath string
}

type todo struct {
	Text      string
	Completed bool
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
		case "thread_id":
			ev.ThreadID = str(v)
		case "item":
			if v[0] == '{' {
				ev.Item = decodeItem(v)
			}
		case "usage":
			if v[0] == '{' {
				ev.Usage = &usage{}
				for u := jsonscan.NewObject(v); u.Next(); {
					n, _ := jsonscan.Int(u.Value())
					switch string(u.Key()) {
					case "input_tokens":
						ev.Usage.InputTokens = n
					case "cached_input_tokens":
						ev.Usage.CachedInputTokens = n
					case "output_tokens":
						ev.Usage.OutputTokens = n
					}
				}
			}
		case "error":
			ev.Error = decodeError(v)
		case "message":
			ev.Message = str(v)
		case "item_id":
			ev.ItemID = str(v)
		case "delta":
			ev.Delta = str(v)
		}
	}
	// A line cut short by a dying process is not an event.
	return o.Closed() && o.End() == len(line)
}

func str(raw []byte) string {
	s, _ := jsonscan.String(raw)
	return s
}

func decodeError(v []byte) *errorInfo {
	if v[0] != '{' {
		return nil
	}
	return &errorInfo{Message: jsonscan.StringField(v, "message")}
}

func decodeItem(obj []byte) *item {
	it := &item{}
	for o := jsonscan.NewObject(obj); o.Next(); {
		v := o.Value()
		switch string(o.Key()) {
		case "id":
			// web_search items carry the key twice (item_N, then the raw
			// id); like encoding/json, the last one wins.
			it.ID = str(v)
		case "type":
			it.Type = str(v)
		case "status":
			it.Status = str(v)
		case "text":
			it.Text = str(v)
		case "command":
			it.Command = str(v)
		case "aggregated_output":
			it.AggregatedOutput = str(v)
		case "exit_code":
			if n, ok := jsonscan.Int(v); ok {
				it.ExitCode = &n
			}
		case "changes":
			for c := range jsonscan.Elements(v) {
				it.Changes = append(it.Changes, change{
					Path: jsonscan.StringField(c, "path"), Kind: jsonscan.StringField(c, "kind"),
					Diff: jsonscan.StringField(c, "diff"), MovePath: jsonscan.StringField(c, "move_path"),
				})
			}
		case "server":
			it.Server = str(v)
		case "tool":
			it.Tool = str(v)
		case "arguments":
			it.Arguments = v
		case "result":
			for c := range jsonscan.Elements(jsonscan.Value(jsonscan.Field(v, "content"))) {
				if t := jsonscan.StringField(c, "text"); t != "" {
					it.Result = append(it.Result, t)
				}
			}
		case "error":
			it.Error = decodeError(v)
		case "prompt":
			it.Prompt = str(v)
		case "query":
			it.Query = str(v)
		case "action":
			it.ActionQuery = jsonscan.StringField(v, "query")
			it.ActionURL = jsonscan.StringField(v, "url")
		case "items":
			for t := range jsonscan.Elements(v) {
				it.Items = append(it.Items, todo{
					Text:      jsonscan.StringField(t, "text"),
					Completed: jsonscan.Bool(jsonscan.Value(jsonscan.Field(t, "completed"))),
				})
			}
		case "message":
			it.Message = str(v)
		}
	}
	return it
}

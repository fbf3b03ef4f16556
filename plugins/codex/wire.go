package codex

import "encoding/json"

// event is one line of `codex exec --json` (a ThreadEvent, tagged by
// type). One struct for every type keeps decoding to a single pass; fields
// a type does not use stay zero. Unknown fields are ignored.
type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	// Item is set for item.started, item.updated and item.completed.
	Item *item `json:"item"`
	// Usage is set for turn.completed.
	Usage *usage `json:"usage"`
	// Error is set for turn.failed.
	Error *errorInfo `json:"error"`
	// Message is set for a top-level error (often only a warning).
	Message string `json:"message"`
	// ItemID and Delta are set for item.plan.delta.
	ItemID string `json:"item_id"`
	Delta  string `json:"delta"`
	// Questions is set for request_user_input.
	Questions json.RawMessage `json:"questions"`
}

type usage struct {
	InputTokens       int `json:"input_tokens"`
	CachedInputTokens int `json:"cached_input_tokens"`
	OutputTokens      int `json:"output_tokens"`
}

type errorInfo struct {
	Message string `json:"message"`
}

// item is a ThreadItem; Type says which fields are set.
type item struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	// agent_message, reasoning, plan
	Text string `json:"text"`
	// command_execution
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	// file_change
	Changes []change `json:"changes"`
	// mcp_tool_call
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    *mcpResult      `json:"result"`
	Error     *errorInfo      `json:"error"`
	// collab_tool_call
	Prompt string `json:"prompt"`
	// web_search
	Query  string     `json:"query"`
	Action *webAction `json:"action"`
	// todo_list
	Items []todo `json:"items"`
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

type mcpResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

type webAction struct {
	Type  string `json:"type"`
	Query string `json:"query"`
	URL   string `json:"url"`
}

type todo struct {
	Text      string `json:"text"`
	Completed bool   `json:"completed"`
}

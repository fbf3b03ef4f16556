package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// Parser turns Claude Code's stream-json lines into core events. It keeps
// the state one turn needs: which messages already streamed their text as
// partial deltas (the full assistant line repeats it), which tool calls are
// open, and the result. A Parser is for one turn and one goroutine.
type Parser struct {
	emit func(core.Event)

	sessionID string
	model     string
	// streamed holds ids of messages whose text arrived as deltas.
	streamed map[string]bool
	current  string            // id of the message being streamed
	tools    map[string]string // tool_use id -> display name
	args     map[string]string // tool_use id -> short argument
	// wroteText is true once any answer text was emitted, so the next
	// message's text starts on a new paragraph.
	wroteText bool
	// shown is the tail of the answer text emitted so far, and block is
	// where the current text block starts in it (-1 once cut off), so the
	// result line can tell what of its text the stream never showed.
	shown     []byte
	block     int
	lastError string
	plans     planSource
	tasks     taskList
	bg        backgroundWork
	// helpers count the tool calls of each subagent, by its parent call.
	helpers display.Helpers
	// context is what the conversation filled of contextModel's window
	// at the main agent's last request.
	context      int
	contextModel string
	result       *core.TurnResult
	garbage      int

	// Workdir, when set, makes the paths of edited files relative to it.
	Workdir string
	// PlansDir, when set, is where the CLI keeps plan files
	// (<config dir>/plans), read for the plan ExitPlanMode asks to approve.
	PlansDir string

	// OnPermission, when set, receives the CLI's permission requests
	// (interactive turns); without it a request is shown as a status
	// line, as when a recorded session is replayed.
	OnPermission func(PermissionRequest)
	// OnReplay, when set, is called for each message from stdin the CLI
	// echoes as it takes it in (--replay-user-messages).
	OnReplay func()
	// OnResult, when set, is called after the result line, and again
	// when background work that outlived it ends (FollowUpDue then
	// says so): an interactive CLI's stdin is closed once no work runs
	// and no answer to it is due.
	OnResult func()
	// interrupted is set by Interrupt, from another goroutine.
	interrupted atomic.Bool
}

// Interrupt tells the parser that the bot interrupted the turn: the error
// result that follows is the interrupt's, not a failure to show.
func (p *Parser) Interrupt() { p.interrupted.Store(true) }

// NewParser returns a parser that sends events to emit.
func NewParser(emit func(core.Event)) *Parser {
	return &Parser{emit: emit, streamed: map[string]bool{}, tools: map[string]string{}, args: map[string]string{}}
}

// line is the union of the fields of every event type we read. Unknown
// types and fields are ignored.
type line struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Model     string          `json:"model"`
	Message   *message        `json:"message"`
	Event     *streamEvent    `json:"event"`
	Parent    *string         `json:"parent_tool_use_id"`
	Error     json.RawMessage `json:"error"`

	// result
	Result       string   `json:"result"`
	IsError      bool     `json:"is_error"`
	DurationMS   float64  `json:"duration_ms"`
	TotalCostUSD float64  `json:"total_cost_usd"`
	Usage        *usage   `json:"usage"`
	Errors       []string `json:"errors"`

	PermissionDenials []permissionDenial `json:"permission_denials"`
	// ModelUsage is, per model, what it used and its context window.
	ModelUsage map[string]struct {
		ContextWindow int `json:"contextWindow"`
	} `json:"modelUsage"`

	// user: what a tool returned, as the CLI's own structure (for
	// Write and Edit, the file and the patch); IsReplay marks a message
	// from stdin echoed as the CLI takes it in (--replay-user-messages)
	ToolUseResult json.RawMessage `json:"tool_use_result"`
	IsReplay      bool            `json:"isReplay"`
	// rate_limit_event (see limits.go)
	RateLimit *rateLimitInfo `json:"rate_limit_info"`

	// control_request, control_response
	RequestID string          `json:"request_id"`
	Request   *controlRequest `json:"request"`
	Response  *struct {
		RequestID string `json:"request_id"`
	} `json:"response"`

	// system/background_tasks_changed, task_started, task_updated,
	// task_notification (see background.go)
	Tasks          json.RawMessage `json:"tasks"`
	TaskID         string          `json:"task_id"`
	Summary        string          `json:"summary"`
	Description    string          `json:"description"`
	IsBackgrounded *bool           `json:"is_backgrounded"`
	Patch          *taskPatch      `json:"patch"`

	// system/init: the MCP servers and how their connection went
	// ("connected", "failed", "pending", "needs-auth").
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`

	// system/api_retry
	Attempt     int  `json:"attempt"`
	MaxRetries  int  `json:"max_retries"`
	ErrorStatus *int `json:"error_status"`
}

type controlRequest struct {
	Subtype   string          `json:"subtype"`
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

type permissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

type message struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Content []contentBlock `json:"content"`
	Usage   *msgUsage      `json:"usage"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type streamEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID string `json:"id"`
	} `json:"message"`
	Delta *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
	ContentBlock *struct {
		Type string `json:"type"`
	} `json:"content_block"`
}

type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Line parses one line of the stream. Lines that are not JSON objects are
// counted and skipped: the CLI may print warnings to stdout.
func (p *Parser) Line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	if p.skippable(b) || p.fastLine(b) {
		return
	}
	var l line
	if b[0] != '{' || json.Unmarshal(b, &l) != nil {
		p.garbage++
		return
	}
	if l.SessionID != "" && l.SessionID != p.sessionID {
		p.sessionID = l.SessionID
		p.emit(core.Event{Kind: core.EventSession, SessionID: l.SessionID, Model: l.Model})
	}
	switch l.Type {
	case "system":
		p.system(&l)
	case "stream_event":
		if l.Parent == nil && l.Event != nil {
			p.streamEvent(l.Event)
		}
	case "assistant":
		p.assistant(&l)
	case "user":
		p.user(&l)
	case "result":
		p.resultLine(&l)
		if p.OnResult != nil {
			p.OnResult()
		}
	case "rate_limit_event":
		p.rateLimit(l.RateLimit)
	case "control_request":
		p.controlRequest(&l)
	case "control_response":
		// The CLI acknowledges the bot's interrupt: the error result
		// that follows is the interrupt's.
		if l.Response != nil && strings.HasPrefix(l.Response.RequestID, interruptPrefix) {
			p.interrupted.Store(true)
		}
	}
}

func (p *Parser) controlRequest(l *line) {
	if l.Request == nil || l.Request.Subtype != "can_use_tool" {
		return
	}
	req := PermissionRequest{RequestID: l.RequestID, Tool: l.Request.ToolName, Input: l.Request.Input}
	if req.Tool == "ExitPlanMode" {
		req.Plan = p.plans.plan(req.Input, l.Request.ToolUseID)
	}
	if p.OnPermission != nil {
		p.OnPermission(req)
		return
	}
	p.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, Text: "Asked to allow " + ToolName(req.Tool) + ": " + toolArg(req.Tool, req.Input)}))
}

func (p *Parser) system(l *line) {
	switch l.Subtype {
	case "init":
		p.model = l.Model
		p.mcpFailed(l)
	case "api_retry":
		status := "connection error"
		if l.ErrorStatus != nil {
			status = fmt.Sprintf("HTTP %d", *l.ErrorStatus)
		}
		p.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning, ID: "api_retry",
			Text: fmt.Sprintf("API %s, retrying (%d/%d)…", status, l.Attempt, l.MaxRetries)}))
	case "background_tasks_changed":
		p.backgroundChanged(l.Tasks)
	case "task_started":
		p.taskStarted(l)
	case "task_updated":
		p.taskUpdated(l)
	case "task_notification":
		p.backgroundEnded(l.TaskID, l.Summary)
	case "compact_boundary":
		p.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, Text: "Conversation compacted"}))
	}
}

func (p *Parser) streamEvent(e *streamEvent) {
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			p.current = e.Message.ID
		}
	case "content_block_start":
		if e.ContentBlock != nil && e.ContentBlock.Type == "text" {
			p.paragraph()
		}
	case "content_block_delta":
		if e.Delta != nil && e.Delta.Type == "text_delta" && e.Delta.Text != "" {
			p.streamed[p.current] = true
			p.text(e.Delta.Text)
		}
	}
}

func (p *Parser) assistant(l *line) {
	if l.Message == nil {
		return
	}
	subagent := l.Parent != nil
	if u := l.Message.Usage; u != nil && !subagent && u.total() > 0 {
		p.context, p.contextModel = u.total(), l.Message.Model
	}
	for _, c := range l.Message.Content {
		switch c.Type {
		case "text":
			if isError(l.Error) {
				p.showError(c.Text)
				continue
			}
			if subagent || p.streamed[l.Message.ID] || c.Text == "" {
				continue
			}
			p.paragraph()
			p.text(c.Text)
		case "tool_use", "server_tool_use":
			if subagent {
				p.subagentCall(*l.Parent, c)
				continue
			}
			if isTaskTool(c.Name) {
				p.tools[c.ID] = c.Name
				if p.tasks.toolUse(c.Name, c.ID, c.Input) {
					p.emit(core.BlockEvent(p.tasks.block()))
				}
				continue
			}
			name, arg := ToolName(c.Name), toolArg(c.Name, c.Input)
			p.tools[c.ID], p.args[c.ID] = name, arg
			p.plans.toolUse(p.PlansDir, c.Name, c.ID, c.Input)
			p.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockToolUse, ID: c.ID, Tool: name,
				Text: arg, Status: core.ToolRunning}))
		case "thinking", "redacted_thinking":
			if !subagent {
				p.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, ID: "thinking", Text: "Thinking…"}))
			}
		}
	}
}

// isError reports whether an assistant line's error field is set.
func isError(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null")) && !bytes.Equal(raw, []byte(`""`))
}

func (p *Parser) user(l *line) {
	if l.IsReplay && l.Parent == nil && p.OnReplay != nil {
		p.OnReplay()
	}
	if l.Message == nil {
		return
	}
	for _, c := range l.Message.Content {
		if c.Type != "tool_result" {
			continue
		}
		name, ok := p.tools[c.ToolUseID]
		if !ok {
			continue
		}
		if isTaskTool(name) {
			// The plan shows the list; a new task's id is in its result.
			p.tasks.created(c.ToolUseID, l.ToolUseResult)
			continue
		}
		if !c.IsError && len(l.Message.Content) == 1 {
			if d, ok := p.fileDiff(name, l.ToolUseResult); ok {
				d.ID = c.ToolUseID // in place of the tool's line
				p.emit(core.BlockEvent(d))
				continue
			}
		}
		b := core.ResponseBlock{Kind: core.BlockToolUse, ID: c.ToolUseID, Tool: name, Status: core.ToolDone}
		switch {
		case p.helpers.Calls(c.ToolUseID) > 0:
			status := core.ToolDone
			if c.IsError {
				status = core.ToolFailed
			}
			b = p.helpers.Done(b, status)
		case c.IsError:
			b.Status = core.ToolFailed
			b.Detail = display.FirstLine(resultText(c.Content))
		case name == "Bash" && backgrounded(l.ToolUseResult):
			b.Detail = "runs in the background"
		case name == "Bash":
			// A command's first line of output says most about it.
			b.Detail = display.FirstLine(resultText(c.Content))
		}
		b.Text = p.args[c.ToolUseID]
		p.emit(core.BlockEvent(b))
	}
}

func (p *Parser) resultLine(l *line) {
	r := &core.TurnResult{
		SessionID: l.SessionID,
		IsError:   l.IsError || strings.HasPrefix(l.Subtype, "error"),
		Duration:  time.Duration(l.DurationMS * float64(time.Millisecond)),
		CostUSD:   l.TotalCostUSD,
	}
	if l.Usage != nil {
		r.InputTokens, r.OutputTokens = l.Usage.InputTokens, l.Usage.OutputTokens
	}
	if window := p.contextWindow(l); window > 0 && p.context > 0 {
		r.ContextTokens, r.ContextWindow = p.context, window
	}
	if prev := p.result; prev != nil {
		// One more turn of the same process (a message steered in as the
		// last answer was written): each result counts its own.
		r.CostUSD += prev.CostUSD
		r.InputTokens += prev.InputTokens
		r.OutputTokens += prev.OutputTokens
		r.Duration += prev.Duration
	}
	p.result = r
	p.bg.followUp = false
	if len(p.bg.running) > 0 {
		p.reportBackground()
	}
	p.denials(l.PermissionDenials)
	if p.interrupted.Load() {
		// The bot stopped the turn and says so itself.
		return
	}
	if !r.IsError {
		p.finalText(l.Result)
		return
	}
	msg := strings.Join(l.Errors, "; ")
	if l.Subtype == "error_max_budget_usd" {
		msg = fmt.Sprintf("Claude Code stopped the turn at its cost limit ($%.4f spent)", l.TotalCostUSD)
	}
	if msg == "" {
		msg = l.Result
	}
	if msg == "" {
		msg = "Claude Code reported " + strings.ReplaceAll(l.Subtype, "_", " ")
	}
	p.showError(msg)
}

// denials shows the tool calls the CLI refused for want of permission,
// by its mode or by the chat's answer: the agent's text may not say so.
func (p *Parser) denials(ds []permissionDenial) {
	var denied display.Denials
	for _, d := range ds {
		denied.Add(display.Call(ToolName(d.ToolName), toolArg(d.ToolName, d.ToolInput)))
	}
	if b, ok := denied.Block(); ok {
		p.emit(core.BlockEvent(b))
	}
}

// FollowUpDue reports whether the background work that outlived a
// result has ended since the last result: the CLI then writes one more
// turn, its answer to the work's end, and a result.
func (p *Parser) FollowUpDue() bool { return p.bg.followUp }

// Result returns the turn's result, or nil if the stream had none.
func (p *Parser) Result() *core.TurnResult { return p.result }

// SessionID returns the newest session id seen.
func (p *Parser) SessionID() string { return p.sessionID }

// Garbage returns how many lines were not JSON.
func (p *Parser) Garbage() int { return p.garbage }

// resultText extracts text from a tool_result's content: a string or a
// list of text blocks.
func resultText(raw json.RawMessage) string {
	if s, ok := jsonscan.String(raw); ok {
		return s
	}
	var parts []string
	for el := range jsonscan.Elements(raw) {
		if t, _ := jsonscan.String(jsonscan.Value(jsonscan.Field(el, "text"))); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
)

// Parser turns the Gemini CLI's stream-json lines into core events. It
// keeps the state one turn needs: the session id, the open tool calls and
// the result. A Parser is for one turn and is not safe for concurrent use.
type Parser struct {
	emit func(core.Event)
	// Workdir, when set, makes the paths of edited files relative to it.
	Workdir string
	// Clock dates a quota's retry time (quotaWindow); nil is the system's.
	Clock core.Clock

	sessionID string
	tools     map[string]toolCall // tool_id -> the call, for its result
	lastError string
	result    *core.TurnResult
	// denied are the calls the CLI's mode did not let run.
	denied display.Denials
}

type toolCall struct {
	name, tool, arg string
	// diff is the change a file-editing call makes, shown once it
	// succeeded.
	diff *core.ResponseBlock
}

// NewParser returns a parser that sends events to emit.
func NewParser(emit func(core.Event)) *Parser {
	return &Parser{emit: emit, tools: map[string]toolCall{}}
}

// Line parses one line of the stream. Lines that are not JSON objects,
// unknown event types and unknown fields are ignored.
func (p *Parser) Line(line []byte) {
	var ev event
	if !decode(line, &ev) {
		return
	}
	switch ev.Type {
	case "init":
		if ev.SessionID != "" && ev.SessionID != p.sessionID {
			p.sessionID = ev.SessionID
			p.emit(core.Event{Kind: core.EventSession, SessionID: ev.SessionID, Model: ev.Model})
		}
	case "message":
		// The user's prompt is echoed once; the answer comes as deltas.
		if ev.Role == "assistant" && ev.Content != "" {
			p.text(ev.Content)
		}
	case "tool_use":
		p.toolUse(&ev)
	case "tool_result":
		p.toolResult(&ev)
	case "error":
		if ev.Message == "" {
			break
		}
		if ev.Severity == "error" {
			p.showError(ev.Message)
		} else {
			p.block(core.ResponseBlock{Kind: core.BlockWarning, Text: ev.Message})
		}
	case "result":
		p.resultLine(&ev)
	}
}

// Result returns the turn's result, or nil if the stream had none.
func (p *Parser) Result() *core.TurnResult { return p.result }

// Outcome says how the turn went once the stream has ended
// (cliproc.Protocol).
func (p *Parser) Outcome() cliproc.Outcome {
	return cliproc.Outcome{Result: p.result, SessionID: p.sessionID}
}

// SessionID returns the session id, Gemini's session id, once known.
func (p *Parser) SessionID() string { return p.sessionID }

// text emits answer text. Each model turn's text follows a tool line or
// starts the answer, so it needs no separator of its own.
func (p *Parser) text(s string) { p.emit(core.TextEvent(s)) }

func (p *Parser) block(b core.ResponseBlock) { p.emit(core.BlockEvent(b)) }

// showError emits an error block, once per distinct message: an error
// event may be repeated by the result.
func (p *Parser) showError(msg string) {
	msg = strings.TrimSpace(msg)
	if msg == "" || msg == p.lastError {
		return
	}
	p.lastError = msg
	p.block(core.ResponseBlock{Kind: core.BlockError, Text: msg})
}

func (p *Parser) toolUse(ev *event) {
	if ev.ToolName == "write_todos" {
		// A checklist, shown in place and updated by the next call.
		if s := todos(ev.Parameters); s != "" {
			p.tools[ev.ToolID] = toolCall{name: ev.ToolName}
			p.block(core.ResponseBlock{Kind: core.BlockStatus, ID: "write_todos", Text: s})
			return
		}
	}
	tc := toolCall{name: ev.ToolName, tool: ToolName(ev.ToolName), arg: toolArg(ev.Parameters), diff: fileDiff(ev.ToolName, ev.Parameters, p.Workdir)}
	p.tools[ev.ToolID] = tc
	p.block(core.ResponseBlock{Kind: core.BlockToolUse, ID: ev.ToolID, Tool: tc.tool, Text: tc.arg, Status: core.ToolRunning})
}

func (p *Parser) toolResult(ev *event) {
	tc, ok := p.tools[ev.ToolID]
	if !ok {
		return
	}
	failed := ev.Status == "error"
	if tc.name == "write_todos" {
		if failed && ev.Error != nil {
			p.block(core.ResponseBlock{Kind: core.BlockWarning, Text: "Todo list not updated: " + ev.Error.Message})
		}
		return
	}
	if !failed && tc.diff != nil {
		d := *tc.diff
		d.ID = ev.ToolID // in place of the tool's line
		p.block(d)
		return
	}
	b := core.ResponseBlock{Kind: core.BlockToolUse, ID: ev.ToolID, Tool: tc.tool, Text: tc.arg, Status: core.ToolDone}
	switch {
	case failed && denied(tc.name, ev.Error):
		b.Status, b.Detail = core.ToolFailed, display.NotRun
		if ev.Error.Type == "policy_violation" {
			b.Detail = display.FirstLine(ev.Error.Message) // the policy's reason
		}
		p.denied.Add(display.Call(tc.tool, tc.arg))
	case failed:
		b.Status = core.ToolFailed
		if ev.Error != nil && ev.Error.Message != "" {
			b.Detail = display.FirstLine(ev.Error.Message)
		} else {
			b.Detail = display.FirstLine(ev.Output)
		}
	case tc.name == "run_shell_command":
		b.Detail = display.LastLines(ev.Output, 3)
	default:
		b.Detail = display.FirstLine(ev.Output)
	}
	p.block(b)
}

func (p *Parser) resultLine(ev *event) {
	r := &core.TurnResult{SessionID: p.sessionID, IsError: ev.Status == "error"}
	if s := ev.Stats; s != nil {
		r.Duration = time.Duration(s.DurationMS * float64(time.Millisecond))
		r.InputTokens, r.OutputTokens = s.InputTokens, s.OutputTokens
	}
	p.result = r
	if b, ok := p.denied.Block(); ok {
		p.block(b)
	}
	if !r.IsError {
		return
	}
	msg := "Gemini reported a failed turn."
	if ev.Error != nil && ev.Error.Message != "" {
		msg = apiMessage(ev.Error.Message)
		clock := p.Clock
		if clock == nil {
			clock = core.SystemClock{}
		}
		if w, ok := quotaWindow(ev.Error.Message, clock.Now()); ok {
			p.emit(core.LimitEvent(w))
		}
	}
	p.showError(msg)
}

// denied reports whether a failed call of tool was refused for want of
// permission. Headless, the CLI turns every call its approval mode would
// ask about into a denial, and leaves the tools so denied outright out of
// the model's tools: a call of one fails as "not registered", as a tool
// it does not have would. So a built-in tool not registered was denied,
// and so was a call its policy refused by its arguments.
func denied(tool string, e *errorInfo) bool {
	if e == nil {
		return false
	}
	_, builtin := toolNames[tool]
	return e.Type == "policy_violation" || e.Type == "tool_not_registered" && builtin
}

// ReadStream feeds a recorded stream-json stream, or a recorded
// `gemini --acp` session (what the CLI wrote, told apart by its first
// message), through a turn's protocol as Run does, answering nothing: for
// jakebot replay and golden tests. Paths of edited files are shown
// relative to workdir.
func ReadStream(r io.Reader, workdir string, emit func(core.Event)) (*core.TurnResult, error) {
	br := bufio.NewReader(r)
	newProtocol := func(link *cliproc.Link) cliproc.Protocol {
		p := NewParser(link.Emit)
		p.Workdir = workdir
		return p
	}
	if head, _ := br.Peek(64); bytes.Contains(head, []byte(`"jsonrpc"`)) {
		newProtocol = replayACP(workdir)
	}
	return cliproc.Replay(br, "Gemini CLI", newProtocol, emit)
}

// fileDiff is the change write_file or replace makes, from its
// parameters: the CLI's stream does not report it. write_file's content
// is shown whole, since the stream does not say what it replaced.
func fileDiff(tool string, params []byte, workdir string) *core.ResponseBlock {
	if tool != "write_file" && tool != "replace" {
		return nil
	}
	var in diffs.Edit
	if json.Unmarshal(params, &in) != nil || in.FilePath == "" {
		return nil
	}
	action := "update"
	if tool == "write_file" {
		action = "write"
	}
	return &core.ResponseBlock{Kind: core.BlockDiff, Path: diffs.RelPath(workdir, in.FilePath), Action: action, Text: in.Diff()}
}

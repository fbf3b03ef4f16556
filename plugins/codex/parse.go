package codex

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
)

// Parser turns the lines of `codex exec --json` into core events. It keeps
// the little state a turn needs: the thread id, whether the turn ended,
// and a top-level error held back until it is known to be only a warning.
// A Parser is for one turn and is not safe for concurrent use.
type Parser struct {
	// Workdir, when set, shortens the paths of changed files under it.
	Workdir string
	// Model, when set, is reported with the session: Codex's stream does
	// not name its model.
	Model string

	emit     func(core.Event)
	threadID string
	usage    usage
	// context and window are the latest response's tokens and the
	// model's context window (app-server only).
	context, window int
	result          *core.TurnResult
	// inText is true while the last thing emitted was answer text, so a
	// second agent message is set apart from the first.
	inText bool
	// pending is a top-level error not yet shown: Codex repeats a turn's
	// fatal error as an error event just before turn.failed.
	pending string
	// planDeltas remembers plan items already streamed by deltas.
	planDeltas map[string]bool
	// streamed remembers agent messages the app-server streamed in deltas.
	streamed map[string]bool
	// denied are the calls declined (by the chat's answer).
	denied display.Denials
	// helpers are the agents the model spawned, each one line by its
	// thread, and agentNames their names (see helpers.go).
	helpers    display.Helpers
	agentNames map[string]string
}

// NewParser returns a parser that sends events to emit.
func NewParser(emit func(core.Event)) *Parser { return &Parser{emit: emit} }

// Line parses one line and emits what it carries. Lines that are not JSON
// objects, unknown event types and unknown fields are ignored: the CLI
// adds them often.
func (p *Parser) Line(line []byte) {
	var ev event
	if !decode(line, &ev) {
		return
	}
	if p.pending != "" {
		msg := p.pending
		p.pending = ""
		if ev.Type != "turn.failed" || ev.Error == nil || ev.Error.Message != msg {
			p.block(core.ResponseBlock{Kind: core.BlockWarning, Text: apiMessage(msg)})
		}
	}
	switch ev.Type {
	case "thread.started":
		if ev.ThreadID != "" && ev.ThreadID != p.threadID {
			p.threadID = ev.ThreadID
			p.emit(core.Event{Kind: core.EventSession, SessionID: ev.ThreadID, Model: p.Model})
		}
	case "item.started", "item.updated", "item.completed":
		if ev.Item != nil {
			p.item(ev.Type, ev.Item)
		}
	case "item.plan.delta":
		if ev.Delta != "" {
			if p.planDeltas == nil {
				p.planDeltas = make(map[string]bool)
			}
			p.planDeltas[ev.ItemID] = true
			p.text(ev.Delta, false)
		}
	case "turn.completed":
		if ev.Usage != nil {
			p.usage = *ev.Usage
		}
		p.finish(false)
	case "turn.failed":
		msg := "Codex reported a failed turn."
		if ev.Error != nil && ev.Error.Message != "" {
			msg = apiMessage(ev.Error.Message)
		}
		p.block(core.ResponseBlock{Kind: core.BlockError, Text: msg})
		p.finish(true)
	case "error":
		if ev.Message != "" {
			p.pending = ev.Message
		}
	case "request_user_input":
		p.block(core.ResponseBlock{Kind: core.BlockWarning,
			Text: "Codex asked a question, which cannot be answered in a headless run."})
	}
}

// Flush emits what the parser still holds back; call it at the end of the
// stream (ReadStream does).
func (p *Parser) Flush() {
	if p.pending != "" {
		p.block(core.ResponseBlock{Kind: core.BlockWarning, Text: apiMessage(p.pending)})
		p.pending = ""
	}
}

// Result returns the turn's result, or nil if the stream did not end the
// turn (with turn.completed or turn.failed).
func (p *Parser) Result() *core.TurnResult { return p.result }

// Outcome flushes what the parser holds back and says how the turn went,
// once the stream has ended (cliproc.Protocol).
func (p *Parser) Outcome() cliproc.Outcome {
	p.Flush()
	return cliproc.Outcome{Result: p.result, SessionID: p.threadID}
}

// ThreadID returns the thread id, Codex's session id, once it is known.
func (p *Parser) ThreadID() string { return p.threadID }

// finish records the turn's end. Codex's usage is a running total for the
// thread, not for this turn; it is passed on as reported.
func (p *Parser) finish(failed bool) {
	if b, ok := p.denied.Block(); ok {
		p.block(b)
	}
	p.result = &core.TurnResult{
		SessionID:     p.threadID,
		IsError:       failed,
		InputTokens:   p.usage.InputTokens + p.usage.CachedInputTokens,
		OutputTokens:  p.usage.OutputTokens,
		ContextTokens: p.context,
		ContextWindow: p.window,
	}
}

// text emits answer text; a new message's text starts a new paragraph
// when it directly follows earlier text.
func (p *Parser) text(s string, newMessage bool) {
	if newMessage && p.inText {
		s = "\n\n" + s
	}
	p.inText = true
	p.emit(core.TextEvent(s))
}

func (p *Parser) block(b core.ResponseBlock) {
	p.inText = false
	p.emit(core.BlockEvent(b))
}

func (p *Parser) item(phase string, it *item) {
	completed := phase == "item.completed"
	switch it.Type {
	case "agent_message":
		if completed && it.Text != "" {
			p.text(it.Text, true)
		}
	case "reasoning":
		if completed {
			if s := reasoningLine(it.Text); s != "" {
				p.block(core.ResponseBlock{Kind: core.BlockStatus, Text: s})
			}
		}
	case "plan":
		if completed && it.Text != "" && !p.planDeltas[it.ID] {
			p.text(it.Text, true)
		}
	case "command_execution":
		if completed && it.Status == "declined" {
			p.denied.Add(display.Call("Shell", shellCommand(it.Command)))
		}
		p.block(commandBlock(it))
	case "file_change":
		p.fileChange(it, completed)
	case "mcp_tool_call":
		p.block(mcpBlock(it))
	case "collab_tool_call":
		p.block(core.ResponseBlock{Kind: core.BlockToolUse, ID: it.ID, Tool: "Agent · " + display.Title(it.Tool),
			Text: it.Prompt, Status: toolStatus(it.Status, completed)})
	case "web_search":
		p.block(core.ResponseBlock{Kind: core.BlockToolUse, ID: it.ID, Tool: "Web Search",
			Text: webQuery(it), Status: toolStatus(it.Status, completed)})
	case "todo_list":
		if len(it.Items) > 0 {
			p.block(core.ResponseBlock{Kind: core.BlockStatus, ID: it.ID, Text: checklist(it.Items)})
		}
	case "error":
		if completed && it.Message != "" {
			p.block(core.ResponseBlock{Kind: core.BlockWarning, Text: it.Message})
		}
	}
}

// fileChange shows each changed file as a diff block once the patch is
// applied; a patch that failed becomes a failed tool line instead.
func (p *Parser) fileChange(it *item, completed bool) {
	if !completed {
		return
	}
	if it.Status == "failed" || it.Status == "declined" {
		paths := make([]string, len(it.Changes))
		for i, c := range it.Changes {
			paths[i] = p.relPath(c.Path)
		}
		if it.Status == "declined" {
			p.denied.Add(display.Call("Edit", strings.Join(paths, ", ")))
		}
		p.block(core.ResponseBlock{Kind: core.BlockToolUse, ID: it.ID, Tool: "Edit",
			Text: strings.Join(paths, ", "), Status: core.ToolFailed, Detail: it.Status})
		return
	}
	for i, c := range it.Changes {
		p.block(p.fileChangeBlock(it, i, c))
	}
}

func (p *Parser) relPath(path string) string { return diffs.RelPath(p.Workdir, path) }

// ReadStream feeds a recorded `codex exec --json` stream, or a recorded
// app-server session (what the server wrote, told apart by its first
// message), through a turn's protocol as Run does, answering nothing: for
// jakebot replay and golden tests. Paths of changed files are shown
// relative to workdir.
func ReadStream(r io.Reader, workdir string, emit func(core.Event)) (*core.TurnResult, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(64)
	newProtocol := func(link *cliproc.Link) cliproc.Protocol {
		p := NewParser(link.Emit)
		p.Workdir = workdir
		return p
	}
	if bytes.HasPrefix(bytes.TrimSpace(head), []byte(`{"id":`)) || bytes.Contains(head, []byte(`"method":`)) {
		newProtocol = func(link *cliproc.Link) cliproc.Protocol {
			return newAppServer(Config{}, core.Turn{Workdir: workdir}, link)
		}
	}
	return cliproc.Replay(br, "Codex", newProtocol, emit)
}

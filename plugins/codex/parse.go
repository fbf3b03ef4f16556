package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// Parser turns the lines of `codex exec --json` into core events. It keeps
// the little state a turn needs: the thread id, whether the turn ended,
// and a top-level error held back until it is known to be only a warning.
// A Parser is for one turn and is not safe for concurrent use.
type Parser struct {
	// Workdir, when set, shortens the paths of changed files under it.
	Workdir string

	threadID string
	result   core.TurnResult
	done     bool
	// text is true while the last thing emitted was answer text, so a
	// second agent message is set apart from the first.
	text bool
	// pending is a top-level error not yet shown: Codex repeats a turn's
	// fatal error as an error event just before turn.failed.
	pending string
	// planDeltas remembers plan items already streamed by deltas.
	planDeltas map[string]bool
}

// Line parses one line and emits what it carries. Lines that are not JSON
// objects, unknown event types and unknown fields are ignored: the CLI
// adds them often.
func (p *Parser) Line(line []byte, emit func(core.Event)) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return
	}
	var ev event
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	if p.pending != "" {
		msg := p.pending
		p.pending = ""
		if ev.Type != "turn.failed" || ev.Error == nil || ev.Error.Message != msg {
			p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockWarning, Text: apiMessage(msg)})
		}
	}
	switch ev.Type {
	case "thread.started":
		if ev.ThreadID != "" && ev.ThreadID != p.threadID {
			p.threadID = ev.ThreadID
			p.result.ResumeToken = ev.ThreadID
			emit(core.Event{Kind: core.EventSession, ResumeToken: ev.ThreadID})
		}
	case "item.started", "item.updated", "item.completed":
		if ev.Item != nil {
			p.item(ev.Type, ev.Item, emit)
		}
	case "item.plan.delta":
		if ev.Delta != "" {
			if p.planDeltas == nil {
				p.planDeltas = make(map[string]bool)
			}
			p.planDeltas[ev.ItemID] = true
			p.emitText(emit, ev.Delta, false)
		}
	case "turn.completed":
		if ev.Usage != nil {
			p.result.InputTokens = ev.Usage.InputTokens + ev.Usage.CachedInputTokens
			p.result.OutputTokens = ev.Usage.OutputTokens
		}
		p.finish(emit)
	case "turn.failed":
		msg := "Codex reported a failed turn."
		if ev.Error != nil && ev.Error.Message != "" {
			msg = apiMessage(ev.Error.Message)
		}
		p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockError, Text: msg})
		p.result.IsError = true
		p.finish(emit)
	case "error":
		if ev.Message != "" {
			p.pending = ev.Message
		}
	case "request_user_input":
		p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockWarning,
			Text: "Codex asked a question, which cannot be answered in a headless run."})
	}
}

// Flush emits what the parser still holds back; call it at the end of the
// stream.
func (p *Parser) Flush(emit func(core.Event)) {
	if p.pending != "" {
		p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockWarning, Text: apiMessage(p.pending)})
		p.pending = ""
	}
}

// Result returns the turn's outcome so far, and whether the stream ended
// the turn (turn.completed or turn.failed).
func (p *Parser) Result() (core.TurnResult, bool) { return p.result, p.done }

func (p *Parser) finish(emit func(core.Event)) {
	p.done = true
	res := p.result
	emit(core.Event{Kind: core.EventDone, Result: &res})
}

func (p *Parser) emitText(emit func(core.Event), s string, newMessage bool) {
	if newMessage && p.text {
		s = "\n\n" + s
	}
	p.text = true
	emit(core.TextEvent(s))
}

func (p *Parser) emitBlock(emit func(core.Event), b core.ResponseBlock) {
	p.text = false
	emit(core.BlockEvent(b))
}

func (p *Parser) item(phase string, it *item, emit func(core.Event)) {
	completed := phase == "item.completed"
	switch it.Type {
	case "agent_message":
		if completed && it.Text != "" {
			p.emitText(emit, it.Text, true)
		}
	case "reasoning":
		if completed {
			if s := reasoningLine(it.Text); s != "" {
				p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockStatus, Text: s})
			}
		}
	case "plan":
		if completed && it.Text != "" && !p.planDeltas[it.ID] {
			p.emitText(emit, it.Text, true)
		}
	case "command_execution":
		p.emitBlock(emit, commandBlock(it))
	case "file_change":
		p.fileChange(it, completed, emit)
	case "mcp_tool_call":
		p.emitBlock(emit, mcpBlock(it))
	case "collab_tool_call":
		p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockToolUse, ID: it.ID, Tool: "Agent · " + toolName(it.Tool),
			Text: it.Prompt, Status: toolStatus(it.Status, completed)})
	case "web_search":
		p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockToolUse, ID: it.ID, Tool: "Web Search",
			Text: webQuery(it), Status: toolStatus(it.Status, completed)})
	case "todo_list":
		if len(it.Items) > 0 {
			p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockStatus, ID: it.ID, Text: checklist(it.Items)})
		}
	case "error":
		if completed && it.Message != "" {
			p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockWarning, Text: it.Message})
		}
	}
}

// fileChange shows each changed file as a diff block once the patch is
// applied; a patch that failed becomes a failed tool line instead.
func (p *Parser) fileChange(it *item, completed bool, emit func(core.Event)) {
	if !completed {
		return
	}
	if it.Status == "failed" || it.Status == "declined" {
		paths := make([]string, len(it.Changes))
		for i, c := range it.Changes {
			paths[i] = p.relPath(c.Path)
		}
		p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockToolUse, ID: it.ID, Tool: "Edit",
			Text: strings.Join(paths, ", "), Status: core.ToolFailed, Detail: it.Status})
		return
	}
	for i, c := range it.Changes {
		path := p.relPath(c.Path)
		if c.MovePath != "" {
			path += " → " + p.relPath(c.MovePath)
		}
		p.emitBlock(emit, core.ResponseBlock{Kind: core.BlockDiff, ID: fmt.Sprintf("%s/%d", it.ID, i),
			Path: path, Action: c.Kind, Text: c.Diff})
	}
}

func (p *Parser) relPath(path string) string {
	if p.Workdir == "" || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(p.Workdir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

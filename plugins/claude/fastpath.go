package claude

import (
	"bytes"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// The parser's fast path: lines it skips or reads a few members of
// without decoding them whole.

// Most lines of a stream are partial-message events the parser does not
// use (block stops, tool input pieces, usage) and status lines. skippable
// recognises them by their leading type and a marker they lack, without
// decoding them: decoding is most of a turn's cost in the bot. Anything
// not recognised is decoded as usual, so this only ever saves work.
func (p *Parser) skippable(b []byte) bool {
	if p.sessionID == "" {
		return false // the first line must be decoded for the session id
	}
	switch {
	case bytes.HasPrefix(b, prefixStreamEvent):
		return !bytes.Contains(b, markTextDelta) && !bytes.Contains(b, markMessageStart) && !bytes.Contains(b, markBlockStart)
	case bytes.HasPrefix(b, prefixSystem):
		rest := b[len(prefixSystem):]
		return !bytes.HasPrefix(rest, []byte(`"subtype":"init"`)) &&
			!bytes.HasPrefix(rest, []byte(`"subtype":"api_retry"`)) &&
			!bytes.HasPrefix(rest, []byte(`"subtype":"compact_boundary"`)) &&
			!bytes.HasPrefix(rest, []byte(`"subtype":"background_tasks_changed"`)) &&
			!bytes.HasPrefix(rest, []byte(`"subtype":"task_notification"`)) &&
			!bytes.HasPrefix(rest, []byte(`"subtype":"task_started"`)) &&
			!bytes.HasPrefix(rest, []byte(`"subtype":"task_updated"`)) &&
			bytes.HasPrefix(rest, []byte(`"subtype":"`))
	}
	return false
}

// fastLine handles the two most frequent or largest line kinds — text
// deltas and the init line with its long lists — by reading only the
// members it needs. It reports whether it handled b.
func (p *Parser) fastLine(b []byte) bool {
	switch {
	case bytes.HasPrefix(b, prefixStreamEvent):
		if !jsonscan.Complete(b) {
			return false // decoded (and rejected) the usual way
		}
		var event []byte
		subagent := false
		for o := jsonscan.NewObject(b); o.Next(); {
			switch string(o.Key()) {
			case "event":
				event = o.Value()
			case "parent_tool_use_id":
				subagent = string(o.Value()) != "null"
			case "session_id":
				if p.sessionID == "" {
					return false
				}
			}
		}
		if !subagent && event != nil {
			p.streamEventRaw(event)
		}
		return true
	case bytes.HasPrefix(b, prefixAssistant) || bytes.HasPrefix(b, prefixUser):
		return p.messageLine(b)
	case bytes.HasPrefix(b, prefixSystem) && bytes.HasPrefix(b[len(prefixSystem):], []byte(`"subtype":"init"`)):
		// A server that failed to connect is a warning: the full parse.
		if !jsonscan.Complete(b) || bytes.Contains(b, []byte(`"status":"failed"`)) {
			return false
		}
		id, model := jsonscan.StringField(b, "session_id"), jsonscan.StringField(b, "model")
		p.model = model
		if id != "" && id != p.sessionID {
			p.sessionID = id
			p.emit(core.Event{Kind: core.EventSession, SessionID: id, Model: model})
		}
		return true
	}
	return false
}

// messageLine reads an assistant or user line member by member: their
// tool results (whole files, command output) are skipped, not decoded.
func (p *Parser) messageLine(b []byte) bool {
	if p.sessionID == "" || !jsonscan.Complete(b) {
		return false
	}
	l := line{Type: "assistant"}
	if bytes.HasPrefix(b, prefixUser) {
		l.Type = "user"
	}
	for o := jsonscan.NewObject(b); o.Next(); {
		switch string(o.Key()) {
		case "message":
			l.Message = rawMessage(o.Value())
		case "parent_tool_use_id":
			if v := o.Value(); string(v) != "null" {
				s, _ := jsonscan.String(v)
				l.Parent = &s
			}
		case "error":
			l.Error = o.Value()
		case "tool_use_result":
			l.ToolUseResult = o.Value()
		case "isReplay":
			l.IsReplay = string(o.Value()) == "true"
		case "session_id":
			if id, _ := jsonscan.String(o.Value()); id != p.sessionID {
				return false // a new session: decoded the usual way
			}
		}
	}
	if l.Type == "assistant" {
		p.assistant(&l)
	} else {
		p.user(&l)
	}
	return true
}

// rawMessage reads the parts of a message the parser uses.
func rawMessage(raw []byte) *message {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	m := &message{}
	for o := jsonscan.NewObject(raw); o.Next(); {
		switch string(o.Key()) {
		case "id":
			m.ID, _ = jsonscan.String(o.Value())
		case "model":
			m.Model, _ = jsonscan.String(o.Value())
		case "usage":
			m.Usage = &msgUsage{}
			jsonscan.Decode(o.Value(), m.Usage, nil)
		case "content":
			for el := range jsonscan.Elements(o.Value()) {
				m.Content = append(m.Content, rawBlock(el))
			}
		}
	}
	return m
}

func rawBlock(raw []byte) contentBlock {
	var c contentBlock
	jsonscan.Decode(raw, &c, nil)
	return c
}

// streamEventRaw is streamEvent over the raw "event" member.
func (p *Parser) streamEventRaw(event []byte) {
	switch jsonscan.StringField(event, "type") {
	case "message_start":
		p.current = jsonscan.StringField(jsonscan.Value(jsonscan.Field(event, "message")), "id")
	case "content_block_start":
		if jsonscan.StringField(jsonscan.Value(jsonscan.Field(event, "content_block")), "type") == "text" {
			p.paragraph()
		}
	case "content_block_delta":
		delta := jsonscan.Value(jsonscan.Field(event, "delta"))
		if jsonscan.StringField(delta, "type") != "text_delta" {
			return
		}
		if text := jsonscan.StringField(delta, "text"); text != "" {
			p.streamed[p.current] = true
			p.text(text)
		}
	}
}

var (
	prefixStreamEvent = []byte(`{"type":"stream_event",`)
	prefixSystem      = []byte(`{"type":"system",`)
	prefixAssistant   = []byte(`{"type":"assistant",`)
	prefixUser        = []byte(`{"type":"user",`)
	markTextDelta     = []byte(`"text_delta"`)
	markMessageStart  = []byte(`"message_start"`)
	markBlockStart    = []byte(`"content_block_start"`)
)

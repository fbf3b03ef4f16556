package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Request ids the bot uses with `gemini --acp`.
const (
	acpInitialize = iota + 1
	acpNewSession
	acpPrompt
)

// acpMessage is one JSON-RPC 2.0 message of the Agent Client Protocol.
type acpMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// acpToolCall is a tool call as ACP describes it.
type acpToolCall struct {
	ID     string `json:"toolCallId"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

// runACP runs one turn through `gemini --acp`, whose permission requests
// become questions in the chat. Cancelling the turn sends session/cancel,
// so the session keeps the partial turn; the CLI is killed only if it has
// not ended cliproc.InterruptGrace later.
func (p *Plugin) runACP(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	procCtx, kill := context.WithCancel(context.WithoutCancel(ctx))
	defer kill()
	args := []string{"--acp"}
	if p.cfg.Model != "" {
		args = append(args, "--model", p.cfg.Model)
	}
	args = append(args, p.cfg.Args...)
	env := append([]string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, p.cfg.Env...)
	proc, err := cliproc.Start(procCtx, cliproc.Spec{Bin: p.cfg.Bin, Args: args, Dir: t.Workdir, Environ: p.cfg.Environ, Env: env, Stdin: true})
	if errors.Is(err, cliproc.ErrNotFound) {
		return core.TurnResult{}, cliproc.NotFound("Gemini CLI", p.cfg.Bin, "@google/gemini-cli", "GEMINI_BIN")
	}
	if err != nil {
		return core.TurnResult{}, fmt.Errorf("start gemini --acp: %w", err)
	}
	s := newACPSession(t, p.cfg.Model, emit, cliproc.NewJSONLines(proc.Stdin), p.logger)
	stop := cliproc.InterruptOn(ctx, s.cancel, kill, cliproc.InterruptGrace)
	if err := s.send(acpInitialize, "initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}}}); err != nil {
		p.logger.Warn("gemini --acp: initialize", "err", err)
	}
	readErr := s.read(proc.Stdout)
	stop()
	res, waitErr := proc.Wait()
	end := cliproc.Ending{CLI: "Gemini CLI", Result: res, WaitErr: waitErr, ReadErr: readErr,
		Finished: s.result != nil, Clean: stripNoise}
	out := core.TurnResult{ResumeToken: s.sessionID()}
	if s.result != nil {
		out = *s.result
	}
	if out.ResumeToken == "" {
		out.ResumeToken = t.ResumeToken
	}
	end.Failed = out.IsError || s.failed
	return out, end.Err(ctx)
}

// acpSession is one turn's conversation with `gemini --acp`.
type acpSession struct {
	turn   core.Turn
	model  string
	emit   func(core.Event)
	out    *cliproc.JSONLines
	logger *slog.Logger
	// tools are the tool calls seen, by id, for their later updates.
	tools map[string]acpToolCall
	// prompting is set once the prompt is sent: before, session/load
	// replays the session's history, which is not this turn's output.
	prompting atomic.Bool
	result    *core.TurnResult
	failed    bool

	mu      sync.Mutex
	session string
}

func newACPSession(t core.Turn, model string, emit func(core.Event), out *cliproc.JSONLines, logger *slog.Logger) *acpSession {
	return &acpSession{turn: t, model: model, emit: emit, out: out, logger: logger, tools: map[string]acpToolCall{}}
}

func (s *acpSession) send(id int, method string, params any) error {
	return s.out.Send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (s *acpSession) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

// cancel asks the CLI to stop the turn; it answers the prompt with
// stopReason "cancelled".
func (s *acpSession) cancel() error {
	id := s.sessionID()
	if id == "" || !s.prompting.Load() {
		return errors.New("no prompt to cancel yet")
	}
	return s.out.Send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": id}})
}

// read handles every line the CLI writes until it closes its output.
func (s *acpSession) read(r io.Reader) error {
	return cliproc.EachLine(r, "Gemini CLI", s.line, func(msg string) { s.emit(core.ErrorEvent(msg)) })
}

func (s *acpSession) line(b []byte) {
	var m acpMessage
	if json.Unmarshal(b, &m) != nil {
		return
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		s.request(m)
	case m.Method == "session/update":
		if s.prompting.Load() {
			s.update(m.Params)
		}
	case m.Method == "" && len(m.ID) > 0:
		s.response(m)
	}
}

// response moves the session on: the session, the prompt, the end.
func (s *acpSession) response(m acpMessage) {
	if m.Error != nil && string(m.ID) == fmt.Sprint(acpNewSession) && s.turn.ResumeToken != "" {
		// A session the CLI never saved (a turn cancelled before the
		// model answered) cannot be loaded: go on in a new one.
		s.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning,
			Text: "Gemini CLI could not resume the session (" + m.Error.Message + "); this turn starts a new one."}))
		s.turn.ResumeToken = ""
		_ = s.send(acpNewSession, "session/new", map[string]any{"cwd": s.turn.Workdir, "mcpServers": []any{}})
		return
	}
	if m.Error != nil {
		s.emit(core.ErrorEvent("Gemini CLI: " + apiMessage(m.Error.Message)))
		s.failed = true
		s.out.Close()
		return
	}
	switch string(m.ID) {
	case fmt.Sprint(acpInitialize):
		params := map[string]any{"cwd": s.turn.Workdir, "mcpServers": []any{}}
		method := "session/new"
		if s.turn.ResumeToken != "" {
			method, params["sessionId"] = "session/load", s.turn.ResumeToken
		}
		_ = s.send(acpNewSession, method, params)
	case fmt.Sprint(acpNewSession):
		var r struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Result, &r)
		if r.SessionID == "" {
			r.SessionID = s.turn.ResumeToken // session/load answers without it
		}
		s.mu.Lock()
		s.session = r.SessionID
		s.mu.Unlock()
		s.emit(core.Event{Kind: core.EventSession, ResumeToken: r.SessionID, Model: s.model})
		s.prompting.Store(true)
		_ = s.send(acpPrompt, "session/prompt", map[string]any{"sessionId": r.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": s.turn.Prompt}}})
	case fmt.Sprint(acpPrompt):
		var r struct {
			StopReason string `json:"stopReason"`
			Meta       struct {
				Quota struct {
					Tokens struct {
						In  int `json:"input_tokens"`
						Out int `json:"output_tokens"`
					} `json:"token_count"`
				} `json:"quota"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(m.Result, &r)
		s.result = &core.TurnResult{ResumeToken: s.sessionID(), InputTokens: r.Meta.Quota.Tokens.In, OutputTokens: r.Meta.Quota.Tokens.Out}
		if r.StopReason == "refusal" {
			s.emit(core.ErrorEvent("Gemini CLI refused to go on with this turn."))
			s.result.IsError = true
		}
		s.out.Close() // the turn is over: the CLI exits
	}
}

// update folds one session/update notification into the turn.
func (s *acpSession) update(params json.RawMessage) {
	var n struct {
		Update struct {
			Kind string `json:"sessionUpdate"`
			// Content is one block for a message chunk, a list for a
			// tool call.
			Content json.RawMessage `json:"content"`
			acpToolCall
		} `json:"update"`
	}
	if json.Unmarshal(params, &n) != nil {
		return
	}
	u := n.Update
	switch u.Kind {
	case "agent_message_chunk":
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(u.Content, &c) == nil && c.Type == "text" && c.Text != "" {
			s.emit(core.TextEvent(c.Text))
		}
	case "agent_thought_chunk":
		s.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, ID: "thinking", Text: "Thinking…"}))
	case "tool_call", "tool_call_update":
		s.tool(u.acpToolCall)
	}
}

// tool shows a tool call's line, keeping what earlier updates said.
func (s *acpSession) tool(c acpToolCall) {
	if c.ID == "" {
		return
	}
	seen := s.tools[c.ID]
	if c.Title == "" {
		c.Title = seen.Title
	}
	if c.Kind == "" {
		c.Kind = seen.Kind
	}
	s.tools[c.ID] = c
	status := core.ToolRunning
	switch c.Status {
	case "completed":
		status = core.ToolDone
	case "failed":
		status = core.ToolFailed
	}
	s.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockToolUse, ID: c.ID, Tool: acpToolName(c.Kind), Text: c.Title, Status: status}))
}

// acpToolName names a tool by its ACP kind.
func acpToolName(kind string) string {
	switch kind {
	case "execute":
		return "Shell"
	case "edit":
		return "Edit"
	case "read":
		return "Read"
	case "search":
		return "Search"
	case "fetch":
		return "Fetch"
	case "delete":
		return "Delete"
	case "move":
		return "Move"
	}
	return "Tool"
}

// request answers what the CLI asks: permissions go to the chat; anything
// else is refused, so that the CLI never waits for nothing.
func (s *acpSession) request(m acpMessage) {
	if m.Method != "session/request_permission" {
		_ = s.out.Send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "jakebot does not handle " + m.Method}})
		return
	}
	var req struct {
		Options []struct {
			ID   string `json:"optionId"`
			Kind string `json:"kind"`
		} `json:"options"`
		ToolCall acpToolCall `json:"toolCall"`
	}
	_ = json.Unmarshal(m.Params, &req)
	s.tool(req.ToolCall)
	option := func(kinds ...string) string {
		for _, k := range kinds {
			for _, o := range req.Options {
				if o.Kind == k {
					return o.ID
				}
			}
		}
		return ""
	}
	call := s.tools[req.ToolCall.ID]
	id := m.ID
	q := &core.Question{Tool: acpToolName(call.Kind), Summary: "`" + strings.TrimSpace(call.Title) + "`", Answer: func(a core.Answer) {
		choice := option("reject_once", "reject_always")
		switch a.Decision {
		case core.Allow:
			choice = option("allow_once", "allow_always")
		case core.AllowAlways:
			choice = option("allow_always", "allow_once")
		}
		outcome := map[string]any{"outcome": "selected", "optionId": choice}
		if choice == "" {
			outcome = map[string]any{"outcome": "cancelled"}
		}
		if err := s.out.Send(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"outcome": outcome}}); err != nil {
			s.logger.Warn("gemini --acp: answer a permission request", "err", err)
		}
	}}
	s.emit(core.Event{Kind: core.EventQuestion, Question: q})
}

// ReadACP feeds a recorded `gemini --acp` session (what the CLI wrote)
// through a turn's session as Run does, answering nothing: for replays
// and golden tests. Questions are emitted as events.
func ReadACP(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	s := newACPSession(core.Turn{}, "", emit, cliproc.NewJSONLines(cliproc.Discard), slog.New(slog.DiscardHandler))
	err := s.read(r)
	return s.result, err
}

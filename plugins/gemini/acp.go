package gemini

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/images"
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
		Data    struct {
			Details string `json:"details"`
		} `json:"data"`
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
	a, err := p.startACP(context.WithoutCancel(ctx), t)
	if err != nil {
		return core.TurnResult{}, err
	}
	return a.Run(ctx, t, emit)
}

// acpTurn is a `gemini --acp` process for one turn: started, its session
// new or loaded, waiting for the turn's message. Started early, it is a
// warm turn (core.Warmer): the CLI's seconds of start-up are over before
// the message comes.
type acpTurn struct {
	p     *Plugin
	t     core.Turn
	proc  *cliproc.Process
	kill  context.CancelFunc
	s     *acpSession
	read  chan error
	stamp sessionStamp
	once  sync.Once
}

// startACP starts the CLI for t and its handshake, up to the prompt.
// Cancelling life kills the CLI.
func (p *Plugin) startACP(life context.Context, t core.Turn) (*acpTurn, error) {
	procCtx, kill := context.WithCancel(life)
	args := []string{"--acp"}
	if t.Mode != "" {
		// Without a mode of its own the ACP agent asks about everything.
		args = append(args, "--approval-mode", t.Mode)
	}
	if model := cmp.Or(t.Model, p.cfg.Model); model != "" {
		args = append(args, "--model", model)
	}
	args = append(args, p.cfg.Args...)
	env := append([]string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, p.cfg.Env...)
	proc, err := cliproc.Start(procCtx, cliproc.Spec{Bin: p.cfg.Bin, Args: args, Dir: t.Workdir, Environ: p.cfg.Environ, Env: env, Stdin: true})
	if errors.Is(err, cliproc.ErrNotFound) {
		kill()
		return nil, cliproc.NotFound("Gemini CLI", p.cfg.Bin, "@google/gemini-cli", "GEMINI_BIN")
	}
	if err != nil {
		kill()
		return nil, fmt.Errorf("start gemini --acp: %w", err)
	}
	a := &acpTurn{p: p, t: t, proc: proc, kill: kill, read: make(chan error, 1), stamp: p.stampSession(t),
		s: newACPSession(t, cmp.Or(t.Model, p.cfg.Model), nil, cliproc.NewJSONLines(proc.Stdin), p.logger)}
	if err := a.s.send(acpInitialize, "initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}}}); err != nil {
		p.logger.Warn("gemini --acp: initialize", "err", err)
	}
	go func() { a.read <- a.s.read(proc.Stdout) }()
	return a, nil
}

// Run hands the message to the waiting CLI and runs the turn.
func (a *acpTurn) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	defer a.kill()
	a.s.start(t, emit)
	stop := cliproc.InterruptOn(ctx, a.s.cancel, a.kill, cliproc.InterruptGrace)
	readErr := <-a.read
	stop()
	res, waitErr := a.proc.Wait()
	end := cliproc.Ending{CLI: "Gemini CLI", Result: res, WaitErr: waitErr, ReadErr: readErr,
		Finished: a.s.result != nil, Clean: stripNoise}
	out := core.TurnResult{ResumeToken: a.s.sessionID()}
	if a.s.result != nil {
		out = *a.s.result
	}
	if out.ResumeToken == "" {
		out.ResumeToken = a.t.ResumeToken
	}
	end.Failed = out.IsError || a.s.failed
	return out, end.Err(ctx)
}

// Fresh reports whether the session the CLI loaded is still as it was.
func (a *acpTurn) Fresh() bool { return a.p.stampSession(a.t) == a.stamp }

// Close stops an unused CLI and waits until it is gone.
func (a *acpTurn) Close() {
	a.once.Do(func() {
		a.kill()
		a.s.abandon()
		<-a.read
		a.proc.Wait()
	})
}

// Warm starts the CLI of t's conversation's next turn, its session loaded
// and waiting for the message (core.Warmer): Gemini CLI takes seconds to
// start. Only a turn that speaks the protocol can wait.
func (p *Plugin) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	if !p.asks(t) {
		return nil, core.ErrNoWarm
	}
	return p.startACP(life, t)
}

// asks reports whether t runs through ACP, where the chat answers
// questions. Not a resumed turn: the pinned CLI answers session/load with
// "No previous sessions found for this project" even for a session its
// own listing and --resume know, and a turn without its session's
// history would be worse than a turn that cannot ask.
func (p *Plugin) asks(t core.Turn) bool {
	return t.Ask && cmp.Or(t.Mode, p.cfg.ApprovalMode) != "yolo" && t.ResumeToken == ""
}

// sessionStamp is how big a session's files were: a session resumed
// elsewhere since has grown.
type sessionStamp struct{ size int64 }

// stampSession stamps t's session; a new session has none.
func (p *Plugin) stampSession(t core.Turn) sessionStamp {
	if len(t.ResumeToken) < 8 {
		return sessionStamp{}
	}
	dir, err := StateDir(p.cfg, os.Getenv, os.UserHomeDir)
	if err != nil {
		return sessionStamp{}
	}
	var st sessionStamp
	for _, project := range projectDirs(dir, filepath.Clean(t.Workdir)) {
		files, _ := filepath.Glob(filepath.Join(project, "chats", "session-*"+t.ResumeToken[:8]+"*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				st.size += fi.Size()
			}
		}
	}
	return st
}

// acpSession is one turn's conversation with `gemini --acp`.
type acpSession struct {
	turn   core.Turn
	model  string
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

	// prompt delivers the turn's message, and emit its events, when the
	// turn runs: a warm session waits for them. Events before that (the
	// session id) are kept in early.
	prompt    chan []any // the message's content blocks
	abandoned chan struct{}
	emitMu    sync.Mutex
	emitFn    func(core.Event)
	early     []core.Event
}

func newACPSession(t core.Turn, model string, emit func(core.Event), out *cliproc.JSONLines, logger *slog.Logger) *acpSession {
	s := &acpSession{turn: t, model: model, out: out, logger: logger, tools: map[string]acpToolCall{},
		prompt: make(chan []any, 1), abandoned: make(chan struct{})}
	if emit != nil {
		s.start(t, emit)
	}
	return s
}

// start gives the session its message (t's prompt and images) and where
// its events go.
func (s *acpSession) start(t core.Turn, emit func(core.Event)) {
	s.emitMu.Lock()
	early := s.early
	s.early = nil
	s.emitFn = emit
	s.emitMu.Unlock()
	for _, ev := range early {
		emit(ev)
	}
	var content []any
	for _, img := range images.Load(t.Images) {
		content = append(content, map[string]any{"type": "image", "mimeType": img.MediaType, "data": img.Base64})
	}
	s.prompt <- append(content, map[string]any{"type": "text", "text": t.Prompt})
}

// emit passes ev on to the turn, or keeps it until the turn runs.
func (s *acpSession) emit(ev core.Event) {
	s.emitMu.Lock()
	fn := s.emitFn
	if fn == nil {
		s.early = append(s.early, ev)
	}
	s.emitMu.Unlock()
	if fn != nil {
		fn(ev)
	}
}

// abandon lets a session waiting for its message give up.
func (s *acpSession) abandon() { close(s.abandoned) }

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
			Text: "Gemini CLI could not resume the session (" + strings.TrimSpace(m.Error.Message+": "+m.Error.Data.Details) + "); this turn starts a new one."}))
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
		var prompt []any
		select {
		case prompt = <-s.prompt: // at once, or when a warm turn runs
		case <-s.abandoned:
			s.out.Close()
			return
		}
		s.prompting.Store(true)
		_ = s.send(acpPrompt, "session/prompt", map[string]any{"sessionId": r.SessionID,
			"prompt": prompt})
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

// Package acp is jake-bot's client of the Agent Client Protocol (JSON-RPC
// on an agent's stdin and stdout), one turn at a time on the turn engine:
// initialize, a session new or loaded, its mode and model, the turn's
// message once it runs (a warm agent waits for it), the turn's updates
// (text, thoughts, tool calls with their diffs, the plan, context use),
// and the agent's permission requests put to the chat. Gemini CLI and any
// agent of a PLUGINS_FILE entry with mode acp use it; what is one agent's
// own (Gemini's session files) stays with its plugin, through Options.
//
// The client announces no file-system or terminal capabilities: the
// agent reads, writes and runs commands itself, in the turn's workdir.
package acp

import (
	"cmp"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/display"
	"github.com/jake-bot/jake-bot/plugins/internal/images"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonrpc"
)

// ProtocolVersion is the ACP version the client speaks.
const ProtocolVersion = 1

// Request ids the client uses.
const (
	idInitialize = iota + 1
	idSession
	idPrompt
	idPing
	idSetup
)

// Options are what an agent's plugin adds to the protocol. Zero values
// add nothing.
type Options struct {
	// Name is the agent's, in the messages shown.
	Name string
	// Model is shown with the session.
	Model string
	// Mode and SetModel, when the agent announces a mode of that id or a
	// model of that id or name, are set for the session
	// (session/set_mode, session/set_model) before the prompt.
	Mode, SetModel string
	// ErrorText rewrites an error message of the agent for the chat;
	// nil shows the message of an API error body in it.
	ErrorText func(msg string) string
	// Limit reads a usage window the agent's error says is used up (a
	// quota and when it may be tried again); nil reads none.
	Limit func(msg string) (core.UsageWindow, bool)
	// SettleReplay says the agent goes on replaying a loaded session's
	// history after answering session/load (unlike the protocol says):
	// the prompt then waits until a refused ping is answered with no
	// update since the one before.
	SettleReplay bool
	// Fresh reports whether the session is as it was at the start.
	Fresh func() bool
	// Loaded is called once a loaded session's history is replayed.
	Loaded func()
	// MarkTurn is called as turn t's message is sent in session id; what
	// it returns puts the turn back in the session if it is interrupted.
	MarkTurn func(id string, t core.Turn) (keep func(partial string) error)
	// ToolOutput shows what a finished tool call printed (the agent's
	// "content" of the call) as its line's detail.
	ToolOutput bool
	// Announced gets what the agent announced of a session: its modes
	// and models.
	Announced func(Session)
	// Commands gets the slash commands the agent announced for the
	// turn's session, each time it does.
	Commands func([]Command)
	// ToolNames are other names for the bot's tools (core.ToolNamesHeader),
	// for an agent that hides a tool of one of their names.
	ToolNames map[string]string
	// ReadOnlyMode is the id of the agent's mode that reads but cannot
	// write, which a read-only turn (core.Turn.ReadOnly) is set to in
	// place of Mode. A read-only turn whose agent does not announce it
	// fails before its prompt is sent; see also request and update.
	ReadOnlyMode string
	// Unasked reports whether a tool call (by its id) needs no approval
	// whatever the mode, for a tool whose only effect is the agent's own
	// (Gemini CLI's todo list), which the agent nonetheless asks about.
	Unasked func(toolCallID string) bool
}

// Client is one turn's conversation with an ACP agent: a cliproc.Protocol
// that interrupts with session/cancel.
type Client struct {
	turn core.Turn
	opts Options
	link *cliproc.Link
	rpc  jsonrpc.Peer
	// tools are the tool calls seen, by id, for their later updates;
	// helperCalls those of subagents, counted on their parent's line by
	// helpers (helpers.go). All three belong to the reading goroutine.
	tools       map[string]toolCall
	helperCalls map[string]bool
	helpers     display.Helpers
	// replaying is set while the agent replays a loaded session's history,
	// which is not this turn's output; heard is set when an update came
	// since the last ping. Both belong to the reading goroutine, as do
	// canLoad (the agent loads sessions) and setup (the calls left to
	// make before the prompt).
	replaying, heard, canLoad, mcpHTTP bool
	setup                              []call
	// prompting is set once the prompt is sent: updates before it are
	// the loaded session's history.
	prompting atomic.Bool
	// interrupted is set once session/cancel is sent.
	interrupted atomic.Bool
	// partial is the text of the model's answer under way, since the
	// last tool call: what an agent may drop of an interrupted turn. It
	// belongs to the reading goroutine.
	partial strings.Builder
	result  *core.TurnResult
	failed  bool
	// used and size are the context's fill, from usage_update.
	used, size int

	mu      sync.Mutex
	session string
	// denied are the calls the chat refused.
	denied display.Denials
	// message is the turn's, kept from its handing over until a new
	// session is made for it.
	message core.Turn
	// keep is MarkTurn's answer for the turn.
	keep func(partial string) error
	// asking are the permission requests not answered yet, by id.
	asking map[string]bool
}

type call struct {
	method string
	params map[string]any
}

var (
	_ cliproc.Interrupter = (*Client)(nil)
	_ cliproc.Freshener   = (*Client)(nil)
)

// New returns the client of turn t on link; Start begins the
// conversation.
func New(t core.Turn, opts Options, link *cliproc.Link) *Client {
	opts.Name = cmp.Or(opts.Name, "The agent")
	return &Client{turn: t, opts: opts, link: link, rpc: jsonrpc.Peer{Send: link.Send, V2: true},
		tools: map[string]toolCall{}, helperCalls: map[string]bool{}, asking: map[string]bool{}, canLoad: true}
}

// Start sends initialize, announcing no client capabilities (see the
// package comment).
func (a *Client) Start() {
	err := a.rpc.Call(idInitialize, "initialize", InitializeParams())
	if err != nil {
		a.link.Logger().Warn(a.opts.Name+": initialize", "err", err)
	}
}

// InitializeParams are initialize's parameters: the protocol version and
// no file-system or terminal capabilities.
func InitializeParams() map[string]any {
	return map[string]any{"protocolVersion": ProtocolVersion,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false}}
}

// Line reads one message of the agent.
func (a *Client) Line(b []byte) {
	m, ok := jsonrpc.Decode(b)
	switch {
	case !ok:
	case m.IsRequest():
		a.request(m)
	case m.Method == "session/update":
		if a.commands(m.Params) {
			return
		}
		if a.prompting.Load() {
			a.update(m.Params)
		} else if a.replaying {
			a.heard = true
		}
	case !m.IsNotification():
		a.response(m)
	}
}

// Outcome says how the turn went once the agent's output has ended. An
// interrupted turn is kept (Options.MarkTurn), now that the agent is gone.
func (a *Client) Outcome() cliproc.Outcome {
	a.mu.Lock()
	keep := a.keep
	a.mu.Unlock()
	if a.interrupted.Load() && keep != nil {
		if err := keep(a.partial.String()); err != nil {
			a.link.Logger().Warn(a.opts.Name+": the interrupted turn may be lost to the session", "err", err)
		}
	}
	return cliproc.Outcome{Result: a.result, SessionID: a.sessionID(), Failed: a.failed}
}

// Fresh reports whether the session the agent loaded is still as it was:
// resumed meanwhile elsewhere, it would answer from stale history.
func (a *Client) Fresh() bool { return a.opts.Fresh == nil || a.opts.Fresh() }

func (a *Client) sessionID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.session
}

// Interrupt asks the agent to stop the turn; it answers the prompt with
// stopReason "cancelled" once the permission requests it waits on are
// answered, as cancelled (as ACP asks of the client).
func (a *Client) Interrupt() error {
	id := a.sessionID()
	if id == "" || !a.prompting.Load() {
		return errors.New("no prompt to cancel yet")
	}
	if err := a.rpc.Notify("session/cancel", map[string]any{"sessionId": id}); err != nil {
		return err
	}
	a.interrupted.Store(true)
	a.mu.Lock()
	asking := a.asking
	a.asking = map[string]bool{}
	a.mu.Unlock()
	for req := range asking {
		if err := a.rpc.Reply(json.RawMessage(req), map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}); err != nil {
			return err
		}
	}
	return nil
}

// answering reports whether permission request req still waits for its
// answer, which is then given: once, whoever gives it.
func (a *Client) answering(req json.RawMessage) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	waiting := a.asking[string(req)]
	delete(a.asking, string(req))
	return waiting
}

func (a *Client) errorText(msg string) string {
	if a.opts.ErrorText != nil {
		return a.opts.ErrorText(msg)
	}
	if e, ok := display.ParseAPIError(msg); ok {
		// An API's error as the agent passed it on: its message.
		return strings.TrimSpace(e.Before + " " + e.Message)
	}
	return msg
}

// response moves the session on: the session, its history, its setup,
// the prompt, the end.
func (a *Client) response(m jsonrpc.Message) {
	switch {
	case m.Error != nil && m.Answers(idSession) && a.turn.SessionID != "":
		// A session the agent cannot load: go on in a new one.
		a.cannotResume(strings.TrimSpace(m.Error.Message + ": " + m.Error.Data.Details))
	case m.Answers(idPing):
		// Refused, as it should be: only its place in the output counts.
		a.pinged()
	case m.Answers(idSetup):
		if m.Error != nil {
			a.link.Emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning, Text: a.opts.Name + ": " + m.Error.Message}))
		}
		a.nextSetup()
	case m.Error != nil:
		// JSON-RPC's generic -32603 says nothing: OpenCode puts the
		// error after it, Gemini CLI in its details.
		msg := strings.TrimPrefix(m.Error.Message, "Internal error: ")
		if msg == "Internal error" && m.Error.Data.Details != "" {
			msg = m.Error.Data.Details
		}
		if a.opts.Limit != nil {
			if w, ok := a.opts.Limit(msg); ok {
				a.link.Emit(core.LimitEvent(w))
			}
		}
		a.link.Emit(core.ErrorEvent(a.opts.Name + ": " + a.errorText(msg)))
		a.failed = true
		if m.Answers(idPrompt) {
			a.result = &core.TurnResult{SessionID: a.sessionID(), IsError: true}
		}
		a.link.Done()
	case m.Answers(idInitialize):
		a.initialized(m.Result)
	case m.Answers(idSession):
		a.started(m.Result)
	case m.Answers(idPrompt):
		a.ended(m.Result)
	}
}

// cannotResume warns that the session could not be loaded and starts a
// new one.
func (a *Client) cannotResume(why string) {
	a.link.Emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning,
		Text: a.opts.Name + " could not resume the session (" + strings.TrimSuffix(why, ": ") + "); this turn starts a new one."}))
	a.turn.SessionID = ""
	a.newSession()
}

// initialized takes the agent's capabilities and asks for the session.
func (a *Client) initialized(result json.RawMessage) {
	caps := CapabilitiesOf(result)
	a.canLoad, a.mcpHTTP = caps.LoadSession, caps.MCPHTTP
	switch {
	case a.turn.SessionID == "":
		a.newSession()
	case !a.canLoad:
		a.cannotResume("it does not offer session/load")
	default:
		_ = a.rpc.Call(idSession, "session/load", map[string]any{"cwd": a.turn.Workdir, "mcpServers": a.mcpServers(), "sessionId": a.turn.SessionID})
	}
}

// newSession asks for a new session once the turn's message is there:
// an agent may record a session only once it has a message (Gemini CLI's
// chat file would otherwise hold no history while a warm CLI waits).
func (a *Client) newSession() {
	a.link.Ready(func(t core.Turn) {
		a.mu.Lock()
		a.message = t
		a.mu.Unlock()
		_ = a.rpc.Call(idSession, "session/new", map[string]any{"cwd": a.turn.Workdir, "mcpServers": a.mcpServers()})
	})
}

// started takes the session the agent made or loaded, and what it
// announced of it, then sets its mode and model.
func (a *Client) started(result json.RawMessage) {
	s := SessionOf(result)
	id := cmp.Or(s.ID, a.turn.SessionID) // session/load answers without it
	a.mu.Lock()
	a.session = id
	a.mu.Unlock()
	a.link.Emit(core.Event{Kind: core.EventSession, SessionID: id, Model: a.opts.Model})
	if a.opts.Announced != nil && (len(s.Modes) > 0 || len(s.Models) > 0) {
		a.opts.Announced(s)
	}
	mode := a.opts.Mode
	if a.turn.ReadOnly {
		mode = a.opts.ReadOnlyMode
		if _, ok := s.mode(mode); !ok {
			a.noReadOnlyMode(s)
			return
		}
	}
	if m, ok := s.mode(mode); ok {
		a.setup = append(a.setup, call{"session/set_mode", map[string]any{"sessionId": id, "modeId": m}})
	}
	if m, ok := s.model(a.opts.SetModel); ok {
		a.setup = append(a.setup, call{"session/set_model", map[string]any{"sessionId": id, "modelId": m}})
	} else if a.opts.SetModel != "" {
		a.link.Emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning,
			Text: a.opts.Name + " offers no model " + a.opts.SetModel + s.offered()}))
	}
	a.nextSetup()
}

// nextSetup makes the next setup call, or goes on to the prompt once
// there are none left.
func (a *Client) nextSetup() {
	if len(a.setup) > 0 {
		c := a.setup[0]
		a.setup = a.setup[1:]
		_ = a.rpc.Call(idSetup, c.method, c.params)
		return
	}
	switch {
	case a.turn.SessionID == "":
		a.mu.Lock()
		t := a.message
		a.mu.Unlock()
		a.prompt(t)
	case a.opts.SettleReplay:
		// Each replayed update is written before the ping's answer.
		a.replaying = true
		_ = a.rpc.Call(idPing, "jakebot/ping", nil)
	default:
		a.replayed()
	}
}

// pinged is a ping's answer: the replay is over if nothing came since the
// last, else another ping follows.
func (a *Client) pinged() {
	if a.heard {
		a.heard = false
		_ = a.rpc.Call(idPing, "jakebot/ping", nil)
		return
	}
	a.replaying = false
	a.replayed()
}

// replayed waits for the turn's message once a loaded session's history
// is replayed.
func (a *Client) replayed() {
	if a.opts.Loaded != nil {
		a.opts.Loaded()
	}
	a.link.Ready(a.prompt)
}

// prompt sends the turn's message.
func (a *Client) prompt(t core.Turn) {
	if a.opts.MarkTurn != nil {
		keep := a.opts.MarkTurn(a.sessionID(), t)
		a.mu.Lock()
		a.keep = keep
		a.mu.Unlock()
	}
	a.prompting.Store(true)
	_ = a.rpc.Call(idPrompt, "session/prompt", map[string]any{"sessionId": a.sessionID(), "prompt": promptContent(t)})
}

// ended is the prompt's answer: the turn is over and the agent exits.
func (a *Client) ended(result json.RawMessage) {
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
	_ = json.Unmarshal(result, &r)
	a.mu.Lock()
	denials, shown := a.denied.Block()
	a.mu.Unlock()
	if shown {
		a.link.Emit(core.BlockEvent(denials))
	}
	a.result = &core.TurnResult{SessionID: a.sessionID(), InputTokens: r.Meta.Quota.Tokens.In, OutputTokens: r.Meta.Quota.Tokens.Out,
		ContextTokens: a.used, ContextWindow: a.size}
	if r.StopReason == "refusal" {
		a.link.Emit(core.ErrorEvent(a.opts.Name + " refused to go on with this turn."))
		a.result.IsError = true
	}
	a.link.Done()
}

// promptContent is t's message as ACP content blocks: its images, then
// its text.
func promptContent(t core.Turn) []any {
	var content []any
	for _, img := range images.Load(t.Images) {
		content = append(content, map[string]any{"type": "image", "mimeType": img.MediaType, "data": img.Base64})
	}
	return append(content, map[string]any{"type": "text", "text": t.Prompt})
}

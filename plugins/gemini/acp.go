package gemini

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

// Request ids the bot uses with `gemini --acp`.
const (
	acpInitialize = iota + 1
	acpSession
	acpPrompt
	acpPing
)

// acpArgs are the arguments of `gemini --acp` for t.
func (p *Plugin) acpArgs(t core.Turn) []string {
	args := []string{"--acp"}
	if t.Mode != "" {
		// Without a mode of its own the ACP agent asks about everything.
		args = append(args, "--approval-mode", t.Mode)
	}
	if model := cmp.Or(t.Model, p.cfg.Model); model != "" {
		args = append(args, "--model", model)
	}
	return append(args, p.cfg.Args...)
}

// acp is one turn's conversation with `gemini --acp` (the Agent Client
// Protocol): initialize, a session new or loaded, the turn's message once
// it runs (a warm CLI waits for it), the turn's updates, and the CLI's
// permission requests put to the chat.
type acp struct {
	turn  core.Turn
	model string
	link  *cliproc.Link
	rpc   jsonrpc.Peer
	// tools are the tool calls seen, by id, for their later updates.
	tools map[string]acpToolCall
	// replaying is set while the CLI replays a loaded session's history,
	// which is not this turn's output; heard is set when an update came
	// since the last ping. Both belong to the reading goroutine.
	replaying, heard bool
	// prompting is set once the prompt is sent: updates before it are
	// the loaded session's history.
	prompting atomic.Bool
	// interrupted is set once session/cancel is sent.
	interrupted atomic.Bool
	// partial is the text of the model's answer under way, since the
	// last tool call: what the CLI drops of an interrupted turn. It
	// belongs to the reading goroutine.
	partial strings.Builder
	result  *core.TurnResult
	failed  bool
	// usage is the last usage_update's; it belongs to the reading
	// goroutine.
	usage acpUsage
	// fresh reports whether the session is as it was at the start.
	fresh func() bool
	// loaded is called once a loaded session's history is replayed.
	loaded func()
	// markTurn is called as turn t's message is sent in session id; what
	// it returns puts the turn back in the session if it is interrupted
	// (see keepInterrupted).
	markTurn func(id string, t core.Turn) (keep func(partial string) error)

	mu      sync.Mutex
	session string
	// denied are the calls the chat refused.
	denied display.Denials
	// message is the turn's, kept from its handing over until a new
	// session is made for it.
	message core.Turn
	// keep is markTurn's answer for the turn.
	keep func(partial string) error
	// asking are the permission requests not answered yet, by id.
	asking map[string]bool
}

var (
	_ cliproc.Interrupter = (*acp)(nil)
	_ cliproc.Freshener   = (*acp)(nil)
)

// acp returns the protocol of t's turn through ACP.
func (p *Plugin) acp(t core.Turn) func(*cliproc.Link) cliproc.Protocol {
	return func(link *cliproc.Link) cliproc.Protocol {
		a := newACP(t, cmp.Or(t.Model, p.cfg.Model), link)
		a.fresh = cliproc.Unchanged(func() sessionStamp { return p.stampSession(t) })
		a.loaded = func() { p.dropLoadLeftovers(t) }
		a.markTurn = func(id string, t core.Turn) func(string) error {
			mark := p.markChat(t.Workdir, id)
			return func(partial string) error { return p.keepInterrupted(mark, t, partial) }
		}
		err := a.rpc.Call(acpInitialize, "initialize", map[string]any{"protocolVersion": 1,
			"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}}})
		if err != nil {
			link.Logger().Warn("gemini --acp: initialize", "err", err)
		}
		return a
	}
}

func newACP(t core.Turn, model string, link *cliproc.Link) *acp {
	return &acp{turn: t, model: model, link: link, rpc: jsonrpc.Peer{Send: link.Send, V2: true}, tools: map[string]acpToolCall{}, asking: map[string]bool{}}
}

func (a *acp) Line(b []byte) {
	m, ok := jsonrpc.Decode(b)
	switch {
	case !ok:
	case m.IsRequest():
		a.request(m)
	case m.Method == "session/update":
		if a.prompting.Load() {
			a.update(m.Params)
		} else if a.replaying {
			a.heard = true
		}
	case !m.IsNotification():
		a.response(m)
	}
}

// Outcome says how the turn went once the CLI's output has ended. An
// interrupted turn is put back in the session, now that the CLI, which
// dropped it, is gone.
func (a *acp) Outcome() cliproc.Outcome {
	a.mu.Lock()
	keep := a.keep
	a.mu.Unlock()
	if a.interrupted.Load() && keep != nil {
		if err := keep(a.partial.String()); err != nil {
			a.link.Logger().Warn("gemini --acp: the interrupted turn may be lost to the session", "err", err)
		}
	}
	return cliproc.Outcome{Result: a.result, Session: a.sessionID(), Failed: a.failed}
}

// Fresh reports whether the session the CLI loaded is still as it was:
// resumed meanwhile elsewhere, it would answer from stale history.
func (a *acp) Fresh() bool { return a.fresh == nil || a.fresh() }

func (a *acp) sessionID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.session
}

// Interrupt asks the CLI to stop the turn; it answers the prompt with
// stopReason "cancelled" once the permission requests it waits on are
// answered, as cancelled (as ACP asks of the client).
func (a *acp) Interrupt() error {
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
func (a *acp) answering(req json.RawMessage) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	waiting := a.asking[string(req)]
	delete(a.asking, string(req))
	return waiting
}

// response moves the session on: the session, its history, the prompt,
// the end.
func (a *acp) response(m jsonrpc.Message) {
	switch {
	case m.Error != nil && m.Answers(acpSession) && a.turn.ResumeToken != "":
		// A session without history cannot be loaded (its only turn
		// was stopped and not put back: the CLI was killed, or another
		// CLI's start deleted the file first): go on in a new one.
		a.link.Emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning,
			Text: "Gemini CLI could not resume the session (" + strings.TrimSpace(m.Error.Message+": "+m.Error.Data.Details) + "); this turn starts a new one."}))
		a.turn.ResumeToken = ""
		a.newSession()
	case m.Answers(acpPing):
		// Refused, as it should be: only its place in the output counts.
		a.pinged()
	case m.Error != nil:
		a.link.Emit(core.ErrorEvent("Gemini CLI: " + apiMessage(m.Error.Message)))
		a.failed = true
		a.link.Done()
	case m.Answers(acpInitialize) && a.turn.ResumeToken == "":
		a.newSession()
	case m.Answers(acpInitialize):
		_ = a.rpc.Call(acpSession, "session/load", map[string]any{"cwd": a.turn.Workdir, "mcpServers": []any{}, "sessionId": a.turn.ResumeToken})
	case m.Answers(acpSession):
		a.started(m.Result)
	case m.Answers(acpPrompt):
		a.ended(m.Result)
	}
}

// newSession asks for a new session once the turn's message is there:
// made earlier, its chat file would hold no history while a warm CLI
// waits, and the next CLI started in the workdir would delete it (see
// dropLoadLeftovers), leaving the session a file without its header.
func (a *acp) newSession() {
	a.link.Ready(func(t core.Turn) {
		a.mu.Lock()
		a.message = t
		a.mu.Unlock()
		_ = a.rpc.Call(acpSession, "session/new", map[string]any{"cwd": a.turn.Workdir, "mcpServers": []any{}})
	})
}

// started takes the session the CLI made or loaded. A loaded one replays
// its history first, which the pinned CLI goes on sending after its answer
// (unlike the protocol says): the prompt waits until a ping's answer
// comes with no update since the one before, which is when the replay is
// over, since each of its updates is written after the last.
func (a *acp) started(result json.RawMessage) {
	var r struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(result, &r)
	id := cmp.Or(r.SessionID, a.turn.ResumeToken) // session/load answers without it
	a.mu.Lock()
	a.session = id
	a.mu.Unlock()
	a.link.Emit(core.Event{Kind: core.EventSession, ResumeToken: id, Model: a.model})
	if a.turn.ResumeToken == "" {
		a.mu.Lock()
		t := a.message
		a.mu.Unlock()
		a.prompt(t)
		return
	}
	a.replaying = true
	_ = a.rpc.Call(acpPing, "jakebot/ping", nil)
}

// pinged is a ping's answer: the replay is over if nothing came since the
// last, else another ping follows.
func (a *acp) pinged() {
	if a.heard {
		a.heard = false
		_ = a.rpc.Call(acpPing, "jakebot/ping", nil)
		return
	}
	a.replaying = false
	if a.loaded != nil {
		a.loaded()
	}
	a.link.Ready(a.prompt)
}

// prompt sends the turn's message.
func (a *acp) prompt(t core.Turn) {
	if a.markTurn != nil {
		keep := a.markTurn(a.sessionID(), t)
		a.mu.Lock()
		a.keep = keep
		a.mu.Unlock()
	}
	a.prompting.Store(true)
	_ = a.rpc.Call(acpPrompt, "session/prompt", map[string]any{"sessionId": a.sessionID(), "prompt": promptContent(t)})
}

// ended is the prompt's answer: the turn is over and the CLI exits.
func (a *acp) ended(result json.RawMessage) {
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
	a.result = &core.TurnResult{ResumeToken: a.sessionID(), InputTokens: r.Meta.Quota.Tokens.In, OutputTokens: r.Meta.Quota.Tokens.Out}
	a.withContext(a.result)
	if r.StopReason == "refusal" {
		a.link.Emit(core.ErrorEvent("Gemini CLI refused to go on with this turn."))
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

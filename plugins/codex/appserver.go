package codex

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/images"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonrpc"
	"github.com/jake-bot/jake-bot/plugins/internal/jsonscan"
)

// Request ids the bot uses with the app-server.
const (
	idInitialize = iota + 1
	idThread
	idTurn
	idInterrupt
	// idSteer is the first of the steers' ids, one each.
	idSteer = 1000
)

// appServerArgs are the arguments of `codex app-server`; the thread's
// settings go in its requests, and the bot's MCP server in -c overrides.
func (p *Plugin) appServerArgs(t core.Turn) []string {
	return append(append([]string{"app-server"}, mcpArgs(t.Tools)...), p.cfg.Args...)
}

// appServer is one turn's conversation with `codex app-server`:
// initialize, the thread started or resumed, the turn's message once it
// runs (a warm server waits for it), the turn's notifications through
// the parser, and the server's requests put to the chat.
type appServer struct {
	cfg    Config
	policy string // approvalPolicy
	turn   core.Turn
	parser *Parser
	link   *cliproc.Link
	rpc    jsonrpc.Peer
	// changes are file changes seen starting, by item id: an approval
	// request for one names only the item. Read and written by the
	// reading goroutine only.
	changes map[string]*appItem
	// failed is set when the app-server refused a request of ours and
	// the turn could not run; the error is already shown.
	failed bool
	// fresh reports whether the thread is as it was at the start.
	fresh func() bool

	mu     sync.Mutex
	thread string
	turnID string
	// inbox is the turn's, open once the turn has started; steers are
	// the turn/steer requests awaiting the server's answer, by id, and
	// ended is set when the turn is over.
	inbox   *core.Inbox
	steers  map[int]chan error
	nsteers int
	ended   bool
}

var (
	_ cliproc.Interrupter = (*appServer)(nil)
	_ cliproc.Freshener   = (*appServer)(nil)
)

// appServer returns the protocol of t's turn through the app-server.
func (p *Plugin) appServer(t core.Turn) func(*cliproc.Link) cliproc.Protocol {
	return func(link *cliproc.Link) cliproc.Protocol {
		s := newAppServer(p.cfg, t, link)
		s.policy = p.approvalPolicy(t)
		s.fresh = cliproc.Unchanged(func() rolloutStamp { return p.stampRollout(t) })
		if err := s.rpc.Call(idInitialize, "initialize", map[string]any{"clientInfo": map[string]any{"name": "jakebot", "version": "1"}}); err != nil {
			link.Logger().Warn("codex app-server: initialize", "err", err)
		}
		return s
	}
}

func newAppServer(cfg Config, t core.Turn, link *cliproc.Link) *appServer {
	s := &appServer{cfg: cfg, turn: t, link: link, rpc: jsonrpc.Peer{Send: link.Send}, changes: map[string]*appItem{},
		steers: map[int]chan error{}}
	s.parser = NewParser(link.Emit)
	s.parser.Workdir, s.parser.Model = t.Workdir, cmp.Or(t.Model, cfg.Model)
	return s
}

func (s *appServer) Line(b []byte) {
	m, ok := jsonrpc.Decode(b)
	switch {
	case !ok:
		// A log line, not the protocol.
	case m.IsRequest():
		s.request(m)
	case m.IsNotification():
		if m.Method == "item/started" {
			s.rememberChange(m.Params)
		}
		if s.parser.Notification(m.Method, m.Params) {
			s.endTurn()
			s.link.Done() // the turn is over: the server exits
		}
	default:
		if !s.steered(m) {
			s.response(m)
		}
	}
}

// Outcome says how the turn went once the server's output has ended.
// A steer it never answered was not taken.
func (s *appServer) Outcome() cliproc.Outcome {
	s.endTurn()
	s.mu.Lock()
	for id, answer := range s.steers {
		answer <- core.ErrNotTaken
		delete(s.steers, id)
	}
	s.mu.Unlock()
	o := s.parser.Outcome()
	o.SessionID, o.Failed = s.threadID(), s.failed
	if s.failed && o.Result == nil {
		// The refusal, shown, is the turn's end.
		o.Result = &core.TurnResult{IsError: true}
	}
	return o
}

// Fresh reports whether the thread the server resumed is still as it was:
// resumed meanwhile elsewhere, it would answer from stale history.
func (s *appServer) Fresh() bool { return s.fresh == nil || s.fresh() }

func (s *appServer) threadID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.thread
}

// response moves the session on: initialized, the thread, the turn.
func (s *appServer) response(m jsonrpc.Message) {
	switch {
	case m.Error != nil:
		s.link.Emit(core.ErrorEvent("Codex refused the turn: " + m.Error.Message))
		s.failed = true
		s.link.Done()
	case m.Answers(idInitialize):
		_ = s.rpc.Notify("initialized", nil)
		params := map[string]any{"cwd": s.turn.Workdir, "sandbox": s.cfg.level(s.turn), "approvalPolicy": s.policy}
		if model := cmp.Or(s.turn.Model, s.cfg.Model); model != "" {
			params["model"] = model
		}
		method := "thread/start"
		if s.turn.SessionID != "" {
			method, params["threadId"] = "thread/resume", s.turn.SessionID
		}
		_ = s.rpc.Call(idThread, method, params)
	case m.Answers(idThread):
		thread := idOf(m.Result, "thread")
		s.mu.Lock()
		s.thread = thread
		s.mu.Unlock()
		s.parser.threadID = thread
		s.link.Emit(core.Event{Kind: core.EventSession, SessionID: thread, Model: s.parser.Model})
		s.link.Ready(func(t core.Turn) {
			s.mu.Lock()
			s.inbox = t.Inbox
			s.mu.Unlock()
			params := map[string]any{"threadId": thread, "input": userInput(t)}
			if s.turn.ReadOnly {
				// The turn's own override too, should the thread have
				// kept a looser one.
				params["sandboxPolicy"], params["approvalPolicy"] = map[string]any{"type": "readOnly"}, "never"
			}
			_ = s.rpc.Call(idTurn, "turn/start", params)
		})
	case m.Answers(idTurn):
		turn := idOf(m.Result, "turn")
		s.mu.Lock()
		s.turnID = turn
		inbox := s.inbox
		s.mu.Unlock()
		inbox.Open(s.steer)
	}
}

// steer adds a message to the running turn (turn/steer): the server
// answers at once, and gives it to the model at the turn's next step.
// It waits for that answer; a turn that ended first refuses it.
func (s *appServer) steer(st core.Steering) error {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return core.ErrNotTaken
	}
	id := idSteer + s.nsteers
	s.nsteers++
	answer := make(chan error, 1)
	s.steers[id] = answer
	params := map[string]any{"threadId": s.thread, "expectedTurnId": s.turnID, "input": userInput(core.Turn{Prompt: st.Prompt, Images: st.Images})}
	s.mu.Unlock()
	if err := s.rpc.Call(id, "turn/steer", params); err != nil {
		s.mu.Lock()
		delete(s.steers, id)
		s.mu.Unlock()
		return err
	}
	// The server answers at once; the bound keeps a hung one from holding
	// the chat's next messages (a /stop among them) until the turn ends.
	// Unanswered, the message waits for the next turn.
	timeout := time.NewTimer(steerWait)
	defer timeout.Stop()
	select {
	case err := <-answer:
		return err
	case <-timeout.C:
		s.mu.Lock()
		delete(s.steers, id)
		s.mu.Unlock()
		return fmt.Errorf("%w: Codex did not answer within %s", core.ErrNotTaken, steerWait)
	}
}

// steerWait bounds the wait for the app-server's answer to a steer.
const steerWait = 10 * time.Second

// steered takes the server's answer to a steer; it reports whether m was
// one.
func (s *appServer) steered(m jsonrpc.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, answer := range s.steers {
		if !m.Answers(id) {
			continue
		}
		delete(s.steers, id)
		if m.Error != nil {
			answer <- fmt.Errorf("%w: %s", core.ErrNotTaken, m.Error.Message)
		} else {
			answer <- nil
		}
		return true
	}
	return false
}

// endTurn closes the turn's inbox: no steer starts once the turn is over.
func (s *appServer) endTurn() {
	s.mu.Lock()
	s.ended = true
	inbox := s.inbox
	s.mu.Unlock()
	inbox.Close()
}

// idOf is the id of result's object member name ({"thread":{"id":…}}).
func idOf(result []byte, name string) string {
	return jsonscan.StringField(jsonscan.Value(jsonscan.Field(result, name)), "id")
}

// request answers what the app-server asks: approvals go to the chat,
// anything else is refused, so that the server never waits for nothing.
func (s *appServer) request(m jsonrpc.Message) {
	switch m.Method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		var req approval
		_ = json.Unmarshal(m.Params, &req)
		id := m.ID
		q := approvalQuestion(m.Method, req, func(a core.Answer) {
			if err := s.rpc.Reply(id, map[string]any{"decision": decision(a)}); err != nil {
				s.link.Logger().Warn("codex app-server: answer an approval", "err", err)
			}
		})
		if it := s.changes[req.ItemID]; it != nil {
			q.Summary, q.Detail = changeSummary(it.asItem(), s.turn.Workdir)
		}
		s.link.Emit(core.Event{Kind: core.EventQuestion, Question: q})
	case "item/tool/requestUserInput":
		s.userInput(m)
	default:
		_ = s.rpc.Refuse(m.ID, m.Method)
	}
}

// rememberChange keeps a file change item that starts, for its approval.
func (s *appServer) rememberChange(params json.RawMessage) {
	var n struct {
		Item *appItem `json:"item"`
	}
	if json.Unmarshal(params, &n) == nil && n.Item != nil && n.Item.Type == "fileChange" {
		s.changes[n.Item.ID] = n.Item
	}
}

// Interrupt asks the app-server to stop the turn; there is nothing to
// interrupt before the turn has started.
func (s *appServer) Interrupt() error {
	s.mu.Lock()
	thread, turn := s.thread, s.turnID
	s.mu.Unlock()
	if turn == "" {
		return errors.New("no turn started yet")
	}
	return s.rpc.Call(idInterrupt, "turn/interrupt", map[string]any{"threadId": thread, "turnId": turn})
}

// userInput is t's message as turn/start input: its images (files the
// CLI reads itself), then its text.
func userInput(t core.Turn) []any {
	var in []any
	for _, img := range images.Load(t.Images) {
		in = append(in, map[string]any{"type": "localImage", "path": img.Path})
	}
	return append(in, map[string]any{"type": "text", "text": t.Prompt})
}

// rolloutStamp is how big a thread's rollout file was: a thread resumed
// elsewhere since has grown.
type rolloutStamp struct{ size int64 }

// stampRollout stamps t's thread; a new thread has none.
func (p *Plugin) stampRollout(t core.Turn) rolloutStamp {
	var st rolloutStamp
	for _, f := range p.rollouts(t.SessionID) {
		if fi, err := os.Stat(f); err == nil {
			st.size += fi.Size()
		}
	}
	return st
}

package codex

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

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/images"
)

// Request ids the bot uses with the app-server.
const (
	idInitialize = iota + 1
	idThread
	idTurn
	idInterrupt
)

// runAppServer runs one turn through `codex app-server`, whose approval
// requests become questions in the chat. Cancelling the turn sends
// turn/interrupt, so the thread keeps the partial turn; the process is
// killed only if it has not ended cliproc.InterruptGrace later.
func (p *Plugin) runAppServer(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	a, err := p.startAppServer(context.WithoutCancel(ctx), t)
	if err != nil {
		return core.TurnResult{}, err
	}
	return a.Run(ctx, t, emit)
}

// appTurn is a `codex app-server` for one turn: started, its thread new
// or resumed, waiting for the turn's message. Started early, it is a warm
// turn (core.Warmer): the server's start-up is over before the message.
type appTurn struct {
	p     *Plugin
	t     core.Turn
	proc  *cliproc.Process
	kill  context.CancelFunc
	s     *appSession
	read  chan error
	stamp rolloutStamp
	once  sync.Once
}

// startAppServer starts the server for t and its handshake, up to the
// turn. Cancelling life kills it.
func (p *Plugin) startAppServer(life context.Context, t core.Turn) (*appTurn, error) {
	procCtx, kill := context.WithCancel(life)
	args := append([]string{"app-server"}, p.cfg.Args...)
	proc, err := cliproc.Start(procCtx, cliproc.Spec{Bin: p.cfg.Bin, Args: args, Dir: t.Workdir, Environ: p.cfg.Environ,
		Env: p.cfg.Env, Stdin: true})
	if errors.Is(err, cliproc.ErrNotFound) {
		kill()
		return nil, cliproc.NotFound("Codex", p.cfg.Bin, "@openai/codex", "CODEX_BIN")
	}
	if err != nil {
		kill()
		return nil, fmt.Errorf("start codex app-server: %w", err)
	}
	s := &appSession{cfg: p.cfg, turn: t, out: cliproc.NewJSONLines(proc.Stdin), changes: map[string]*appItem{},
		logger: p.logger, message: make(chan core.Turn, 1), abandoned: make(chan struct{})}
	s.parser = NewParser(s.emit)
	s.parser.Workdir, s.parser.Model = t.Workdir, cmp.Or(t.Model, p.cfg.Model)
	a := &appTurn{p: p, t: t, proc: proc, kill: kill, s: s, read: make(chan error, 1), stamp: p.stampRollout(t)}
	if err := s.send(idInitialize, "initialize", map[string]any{"clientInfo": map[string]any{"name": "jakebot", "version": "1"}}); err != nil {
		p.logger.Warn("codex app-server: initialize", "err", err)
	}
	go func() { a.read <- s.read(proc.Stdout) }()
	return a, nil
}

// Run hands the message to the waiting server and runs the turn.
func (a *appTurn) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	defer a.kill()
	a.s.start(t, emit)
	stop := cliproc.InterruptOn(ctx, a.s.interrupt, a.kill, cliproc.InterruptGrace)
	readErr := <-a.read
	stop()
	res, waitErr := a.proc.Wait()
	end := cliproc.Ending{CLI: "Codex", Result: res, WaitErr: waitErr, ReadErr: readErr,
		Finished: a.s.parser.Result() != nil, Clean: stripNoise}
	out := core.TurnResult{ResumeToken: a.s.threadID()}
	if r := a.s.parser.Result(); r != nil {
		out = *r
		out.ResumeToken = a.s.threadID()
	}
	if out.ResumeToken == "" {
		out.ResumeToken = a.t.ResumeToken
	}
	end.Failed = out.IsError || a.s.failed
	return out, end.Err(ctx)
}

// Fresh reports whether the thread the server resumed is still as it was:
// resumed meanwhile elsewhere, it would answer from stale history.
func (a *appTurn) Fresh() bool { return a.p.stampRollout(a.t) == a.stamp }

// Close stops an unused server and waits until it is gone.
func (a *appTurn) Close() {
	a.once.Do(func() {
		a.kill()
		close(a.s.abandoned)
		<-a.read
		a.proc.Wait()
	})
}

// Warm starts the app-server of t's conversation's next turn, its thread
// resumed and waiting for the message (core.Warmer). Only a turn that
// speaks the protocol can wait.
func (p *Plugin) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	if !t.Ask || p.cfg.ApprovalPolicy == "never" {
		return nil, core.ErrNoWarm
	}
	return p.startAppServer(life, t)
}

// rolloutStamp is how big a thread's rollout file was: a thread resumed
// elsewhere since has grown.
type rolloutStamp struct{ size int64 }

// stampRollout stamps t's thread; a new thread has none.
func (p *Plugin) stampRollout(t core.Turn) rolloutStamp {
	if t.ResumeToken == "" || strings.ContainsAny(t.ResumeToken, `/\*?[`) {
		return rolloutStamp{}
	}
	home, err := p.home()
	if err != nil {
		return rolloutStamp{}
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*"+t.ResumeToken+".jsonl"))
	var st rolloutStamp
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			st.size += fi.Size()
		}
	}
	return st
}

// appSession is one turn's conversation with the app-server.
type appSession struct {
	cfg    Config
	turn   core.Turn
	parser *Parser
	out    *cliproc.JSONLines
	logger *slog.Logger
	// changes are file changes seen starting, by item id: an approval
	// request for one names only the item.
	changes map[string]*appItem
	// failed is set when the app-server refused a request of ours and
	// the turn could not run; the error is already shown.
	failed bool

	mu     sync.Mutex
	thread string
	turnID string

	// message delivers the turn's message (its prompt and images), and
	// emitFn where its events go, when the turn runs: a warm server waits
	// for them. Events before that (the thread) are kept in early.
	message   chan core.Turn
	abandoned chan struct{}
	emitMu    sync.Mutex
	emitFn    func(core.Event)
	early     []core.Event
}

// start gives the session its message and where its events go.
func (s *appSession) start(t core.Turn, emit func(core.Event)) {
	s.emitMu.Lock()
	early := s.early
	s.early = nil
	s.emitFn = emit
	s.emitMu.Unlock()
	for _, ev := range early {
		emit(ev)
	}
	s.message <- t
}

// emit passes ev on to the turn, or keeps it until the turn runs.
func (s *appSession) emit(ev core.Event) {
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

func (s *appSession) send(id int, method string, params any) error {
	return s.out.Send(map[string]any{"id": id, "method": method, "params": params})
}

func (s *appSession) threadID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.thread
}

// read handles every line the app-server writes until it closes its
// output; the session closes the server's input once the turn is over.
func (s *appSession) read(r io.Reader) error {
	defer s.parser.Flush()
	return cliproc.EachLine(r, "Codex", s.line, func(msg string) { s.emit(core.ErrorEvent(msg)) })
}

func (s *appSession) line(b []byte) {
	var m rpc
	if json.Unmarshal(b, &m) != nil {
		return // a log line, not the protocol
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		s.request(m)
	case m.Method != "":
		if s.parser.Notification(m.Method, m.Params) {
			s.out.Close() // the turn is over: the server exits
		}
		if m.Method == "item/started" {
			s.rememberChange(m.Params)
		}
	case len(m.ID) > 0:
		s.response(m)
	}
}

// response moves the session on: initialized, the thread, the turn.
func (s *appSession) response(m rpc) {
	if m.Error != nil {
		s.emit(core.ErrorEvent("Codex refused the turn: " + m.Error.Message))
		s.failed = true
		s.out.Close()
		return
	}
	switch string(m.ID) {
	case fmt.Sprint(idInitialize):
		_ = s.out.Send(map[string]any{"method": "initialized"})
		params := map[string]any{"cwd": s.turn.Workdir, "sandbox": cmp.Or(s.turn.Mode, s.cfg.Sandbox), "approvalPolicy": s.cfg.ApprovalPolicy}
		if model := cmp.Or(s.turn.Model, s.cfg.Model); model != "" {
			params["model"] = model
		}
		method := "thread/start"
		if s.turn.ResumeToken != "" {
			method, params["threadId"] = "thread/resume", s.turn.ResumeToken
		}
		_ = s.send(idThread, method, params)
	case fmt.Sprint(idThread):
		var r struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
		}
		_ = json.Unmarshal(m.Result, &r)
		s.mu.Lock()
		s.thread = r.Thread.ID
		s.mu.Unlock()
		s.parser.threadID = r.Thread.ID
		s.emit(core.Event{Kind: core.EventSession, ResumeToken: r.Thread.ID, Model: cmp.Or(s.turn.Model, s.cfg.Model)})
		var t core.Turn
		select {
		case t = <-s.message: // at once, or when a warm turn runs
		case <-s.abandoned:
			s.out.Close()
			return
		}
		_ = s.send(idTurn, "turn/start", map[string]any{"threadId": r.Thread.ID, "input": userInput(t)})
	case fmt.Sprint(idTurn):
		var r struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		_ = json.Unmarshal(m.Result, &r)
		s.mu.Lock()
		s.turnID = r.Turn.ID
		s.mu.Unlock()
	}
}

// request answers what the app-server asks: approvals go to the chat,
// anything else is refused, so that the server never waits for nothing.
func (s *appSession) request(m rpc) {
	switch m.Method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		req := approval{ID: m.ID, Method: m.Method}
		_ = json.Unmarshal(m.Params, &req)
		q := approvalQuestion(req, func(a core.Answer) {
			if err := s.out.Send(map[string]any{"id": req.ID, "result": map[string]any{"decision": decision(a)}}); err != nil {
				s.logger.Warn("codex app-server: answer an approval", "err", err)
			}
		})
		if it := s.changes[req.ItemID]; it != nil {
			q.Summary, q.Detail = changeSummary(it)
		}
		s.emit(core.Event{Kind: core.EventQuestion, Question: q})
	default:
		if m.Method == "item/tool/requestUserInput" {
			s.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning, Text: "Codex asked a question the bot cannot put to the chat yet; it was declined."}))
		}
		_ = s.out.Send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "jakebot does not handle " + m.Method}})
	}
}

// rememberChange keeps a file change item that starts, for its approval.
func (s *appSession) rememberChange(params json.RawMessage) {
	var n struct {
		Item *appItem `json:"item"`
	}
	if json.Unmarshal(params, &n) == nil && n.Item != nil && n.Item.Type == "fileChange" {
		s.changes[n.Item.ID] = n.Item
	}
}

// changeSummary is a file change's question text: the files, and the
// start of their diffs.
func changeSummary(it *appItem) (summary, detail string) {
	var paths, diffs []string
	for _, c := range it.Changes {
		paths = append(paths, c.Path)
		diffs = append(diffs, c.Diff)
	}
	detail = strings.Join(diffs, "\n")
	if lines := strings.Split(detail, "\n"); len(lines) > 24 {
		detail = strings.Join(lines[:24], "\n") + "\n…"
	}
	return strings.Join(paths, ", "), detail
}

// interrupt asks the app-server to stop the turn; there is nothing to
// interrupt before the turn has started.
func (s *appSession) interrupt() error {
	s.mu.Lock()
	thread, turn := s.thread, s.turnID
	s.mu.Unlock()
	if turn == "" {
		return errors.New("no turn started yet")
	}
	return s.send(idInterrupt, "turn/interrupt", map[string]any{"threadId": thread, "turnId": turn})
}

// ReadAppServer feeds a recorded app-server session (what the server
// wrote) through a turn's session as Run does, answering nothing: for
// replays and golden tests. Questions are emitted as events.
func ReadAppServer(r io.Reader, parser *Parser) error {
	s := &appSession{parser: parser, out: cliproc.NewJSONLines(cliproc.Discard), changes: map[string]*appItem{},
		logger: slog.New(slog.DiscardHandler), message: make(chan core.Turn, 1), abandoned: make(chan struct{})}
	s.start(core.Turn{}, parser.emit)
	return s.read(r)
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

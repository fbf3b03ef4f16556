package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
)

// AnnounceInterval is how often a runner says it is there; a gateway
// counts a runner silent for OfflineAfter as gone.
const (
	AnnounceInterval = 5 * time.Second
	OfflineAfter     = 15 * time.Second
)

// Runner serves turns sent to it over NATS with its local plugins, in
// its own roots: whatever a gateway asks, a workdir outside them is
// refused here.
type Runner struct {
	nc       *nats.Conn
	name     string
	plugins  *core.Registry
	roots    core.Roots
	logger   *slog.Logger
	interval time.Duration

	wg sync.WaitGroup
}

// NewRunner returns a runner called name on nc. A zero interval is
// AnnounceInterval; a nil logger discards.
func NewRunner(nc *nats.Conn, name string, plugins *core.Registry, roots core.Roots, interval time.Duration, logger *slog.Logger) (*Runner, error) {
	if !validName(name) {
		return nil, fmt.Errorf("runner name %q: want letters, digits, - and _ (RUNNER_NAME)", name)
	}
	if interval <= 0 {
		interval = AnnounceInterval
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{nc: nc, name: name, plugins: plugins, roots: roots, interval: interval,
		logger: logger.With("runner", name)}, nil
}

// Run serves until ctx is done; then it cancels the turns it runs and
// waits for them.
func (r *Runner) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	handlers := map[string]nats.MsgHandler{
		discoverSubject():                      func(*nats.Msg) { r.announce() },
		runnerSubject(r.name, "resolve"):       r.resolve,
		runnerSubject(r.name, "conversations"): func(m *nats.Msg) { r.conversations(ctx, m) },
		runnerSubject(r.name, "turn"):          func(m *nats.Msg) { r.turn(ctx, m) },
	}
	var subs []*nats.Subscription
	defer func() {
		for _, s := range subs {
			s.Unsubscribe()
		}
	}()
	for subj, h := range handlers {
		s, err := r.nc.Subscribe(subj, h)
		if err != nil {
			return fmt.Errorf("runner: subscribe %s: %w", subj, err)
		}
		subs = append(subs, s)
	}
	if err := r.nc.Flush(); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	r.logger.Info("runner serving", "plugins", r.plugins.IDs(), "roots", []string(r.roots))
	tick := time.NewTicker(r.interval)
	defer tick.Stop()
	for {
		r.announce()
		select {
		case <-tick.C:
		case <-ctx.Done():
			cancel()
			r.wg.Wait()
			return nil
		}
	}
}

func (r *Runner) announce() {
	a := Announcement{Name: r.name, Roots: r.roots}
	for _, id := range r.plugins.IDs() {
		p, _ := r.plugins.Get(id)
		a.Plugins = append(a.Plugins, PluginInfo{ID: p.ID(), Name: p.Name()})
	}
	data, _ := json.Marshal(a)
	if err := r.nc.Publish(announceSubject(r.name), data); err != nil {
		r.logger.Warn("announce", "err", err)
	}
}

// workdir resolves path inside the runner's own roots.
func (r *Runner) workdir(path string) (string, error) {
	wd, err := r.roots.Resolve(path, "")
	if err != nil {
		return "", core.Errorf("on %s: %s", r.name, core.UserMessage(err))
	}
	return wd, nil
}

func (r *Runner) resolve(m *nats.Msg) {
	var req resolveRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		respond(m, resolveReply{Error: toWire(err)})
		return
	}
	wd, err := r.workdir(req.Path)
	respond(m, resolveReply{Workdir: wd, Error: toWire(err)})
}

func (r *Runner) conversations(ctx context.Context, m *nats.Msg) {
	var req listRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		respond(m, listReply{Error: toWire(err)})
		return
	}
	p, ok := r.plugins.Get(req.Plugin)
	wd, err := r.workdir(req.Workdir)
	if !ok {
		err = core.Errorf("runner %s has no plugin %q", r.name, req.Plugin)
	}
	if err != nil {
		respond(m, listReply{Error: toWire(err)})
		return
	}
	infos, err := p.Conversations(ctx, wd)
	respond(m, listReply{Conversations: infos, Error: toWire(err)})
}

// turn accepts a turn and runs it: its events go out numbered, on the
// turn's own subject; a cancel or an answer comes back on it.
func (r *Runner) turn(ctx context.Context, m *nats.Msg) {
	var req turnRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || !validName(req.ID) {
		respond(m, turnReply{Error: &wireError{Message: "malformed turn request"}})
		return
	}
	p, ok := r.plugins.Get(req.Plugin)
	if !ok {
		respond(m, turnReply{Error: toWire(core.Errorf("runner %s has no plugin %q", r.name, req.Plugin))})
		return
	}
	wd, err := r.workdir(req.Turn.Workdir)
	if err != nil {
		respond(m, turnReply{Error: toWire(err)})
		return
	}
	t := req.Turn
	t.Workdir, t.Images = wd, nil
	turnCtx, cancel := context.WithCancelCause(ctx)
	rt := &runningTurn{r: r, id: req.ID, questions: map[string]func(core.Answer){}}
	cancelSub, err1 := r.nc.Subscribe(turnSubject(r.name, req.ID, "cancel"), func(*nats.Msg) { cancel(core.ErrStopped) })
	answerSub, err2 := r.nc.Subscribe(turnSubject(r.name, req.ID, "answer"), rt.answer)
	if err := firstErr(err1, err2, r.nc.Flush()); err != nil {
		cancel(nil)
		respond(m, turnReply{Error: toWire(err)})
		return
	}
	respond(m, turnReply{})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel(nil)
		defer cancelSub.Unsubscribe()
		defer answerSub.Unsubscribe()
		r.logger.Info("turn", "id", req.ID, "plugin", p.ID(), "workdir", wd)
		res, err := p.Run(turnCtx, t, rt.emit)
		rt.send(turnMessage{Done: true, Result: &res, Error: toWire(err)})
		r.nc.Flush()
	}()
}

// runningTurn numbers a turn's messages and keeps its open questions.
type runningTurn struct {
	r  *Runner
	id string

	mu        sync.Mutex
	seq       int
	questions map[string]func(core.Answer)
}

func (t *runningTurn) emit(ev core.Event) {
	we := &wireEvent{Kind: ev.Kind, Text: ev.Text, Block: ev.Block, ResumeToken: ev.ResumeToken, Model: ev.Model}
	if q := ev.Question; q != nil {
		t.mu.Lock()
		id := "q" + strconv.Itoa(len(t.questions)+1)
		t.questions[id] = q.Answer
		t.mu.Unlock()
		we.Question = &wireQuestion{ID: id, Tool: q.Tool, Summary: q.Summary, Detail: q.Detail, Options: q.Options}
	}
	t.send(turnMessage{Event: we})
}

// send publishes m with the next number; the numbers let the gateway see
// a gap rather than show a reply with a hole in it.
func (t *runningTurn) send(m turnMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	m.Seq = t.seq
	data, err := json.Marshal(m)
	if err == nil {
		err = t.r.nc.Publish(turnSubject(t.r.name, t.id, "event"), data)
	}
	if err != nil {
		t.r.logger.Warn("turn event not sent", "id", t.id, "err", err)
	}
}

func (t *runningTurn) answer(m *nats.Msg) {
	var a answerMessage
	if json.Unmarshal(m.Data, &a) != nil {
		return
	}
	t.mu.Lock()
	f := t.questions[a.Question]
	delete(t.questions, a.Question)
	t.mu.Unlock()
	if f != nil {
		f(a.Answer)
	}
}

func respond(m *nats.Msg, v any) {
	data, _ := json.Marshal(v)
	m.Respond(data)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

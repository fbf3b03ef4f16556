package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/jake-bot/jake-bot/core"
)

// requestTimeout bounds a request to a runner that is not a turn.
const requestTimeout = 10 * time.Second

// Gateway is the bot's side: it hears runners announce themselves and
// runs conversations' turns on them (core.Runners).
type Gateway struct {
	nc           *nats.Conn
	logger       *slog.Logger
	offlineAfter time.Duration
	sub          *nats.Subscription

	mu      sync.Mutex
	runners map[string]*runnerState
}

type runnerState struct {
	info     Announcement
	lastSeen time.Time
}

var _ core.Runners = (*Gateway)(nil)

// NewGateway listens for runners on nc and asks those already up to
// announce themselves. A zero offlineAfter is OfflineAfter.
func NewGateway(nc *nats.Conn, offlineAfter time.Duration, logger *slog.Logger) (*Gateway, error) {
	if offlineAfter <= 0 {
		offlineAfter = OfflineAfter
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{nc: nc, logger: logger, offlineAfter: offlineAfter, runners: map[string]*runnerState{}}
	sub, err := nc.Subscribe(announceAll(), g.heard)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.sub = sub
	if err := firstErr(nc.Publish(discoverSubject(), nil), nc.Flush()); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return g, nil
}

// Close stops listening.
func (g *Gateway) Close() { g.sub.Unsubscribe() }

func (g *Gateway) heard(m *nats.Msg) {
	var a Announcement
	if json.Unmarshal(m.Data, &a) != nil || announceSubject(a.Name) != m.Subject {
		return // a runner speaks only for itself
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, known := g.runners[a.Name]; !known {
		g.logger.Info("runner connected", "runner", a.Name, "roots", a.Roots)
	}
	g.runners[a.Name] = &runnerState{info: a, lastSeen: time.Now()}
}

// online returns runner's announcement if it was heard lately.
func (g *Gateway) online(runner string) (Announcement, time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st, ok := g.runners[runner]
	if !ok {
		return Announcement{}, time.Time{}, false
	}
	return st.info, st.lastSeen, time.Since(st.lastSeen) < g.offlineAfter
}

// List describes the runners heard of.
func (g *Gateway) List() []core.RunnerInfo {
	g.mu.Lock()
	var out []core.RunnerInfo
	for name, st := range g.runners {
		ri := core.RunnerInfo{Name: name, Roots: st.info.Roots, LastSeen: st.lastSeen, Online: time.Since(st.lastSeen) < g.offlineAfter}
		for _, p := range st.info.Plugins {
			ri.Plugins = append(ri.Plugins, p.ID)
		}
		out = append(out, ri)
	}
	g.mu.Unlock()
	slices.SortFunc(out, func(a, b core.RunnerInfo) int { return compare(a.Name, b.Name) })
	return out
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Plugin is pluginID as runner serves it.
func (g *Gateway) Plugin(runner, pluginID string) (core.Plugin, error) {
	info, seen, ok := g.online(runner)
	switch {
	case seen.IsZero():
		return nil, core.Errorf("no runner %q has connected (/runners lists those that have)", runner)
	case !ok:
		return nil, core.Errorf("runner %s is offline (last heard %s ago); the conversation goes on there when it is back",
			runner, time.Since(seen).Round(time.Second))
	}
	for _, p := range info.Plugins {
		if p.ID == pluginID {
			return &remotePlugin{g: g, runner: runner, id: p.ID, name: p.Name}, nil
		}
	}
	return nil, core.Errorf("runner %s has no %s (it serves %s)", runner, pluginID, pluginNames(info.Plugins))
}

func pluginNames(ps []PluginInfo) string {
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	if len(ids) == 0 {
		return "none"
	}
	return fmt.Sprint(ids)
}

// Resolve asks runner for path inside its roots.
func (g *Gateway) Resolve(ctx context.Context, runner, path string) (string, error) {
	var rep resolveReply
	if err := g.request(ctx, runnerSubject(runner, "resolve"), resolveRequest{Path: path}, &rep); err != nil {
		return "", fmt.Errorf("runner %s: %w", runner, err)
	}
	return rep.Workdir, rep.Error.err()
}

// request sends a request to a runner and decodes its reply.
func (g *Gateway) request(ctx context.Context, subject string, req, reply any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	m, err := g.nc.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return core.Errorf("it is not connected")
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(m.Data, reply)
}

// remotePlugin is a plugin of a runner, as the router sees it.
type remotePlugin struct {
	g      *Gateway
	runner string
	id     string
	name   string
}

func (p *remotePlugin) ID() string   { return p.id }
func (p *remotePlugin) Name() string { return p.name + " on " + p.runner }

// Conversations lists the CLI's history on the runner.
func (p *remotePlugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	var rep listReply
	if err := p.g.request(ctx, runnerSubject(p.runner, "conversations"), listRequest{Plugin: p.id, Workdir: workdir}, &rep); err != nil {
		return nil, fmt.Errorf("runner %s: %w", p.runner, err)
	}
	return rep.Conversations, rep.Error.err()
}

// stopGrace is how long a stopped turn may take to end on the runner
// (the CLI's own interrupt, then its kill) before the gateway gives up.
const stopGrace = 20 * time.Second

// Run runs the turn on the runner: the events come back in order;
// cancelling ctx stops it there; a runner that goes silent ends it with
// an error saying so.
func (p *remotePlugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	id := nuid.Next()
	msgs := make(chan *nats.Msg, 4096)
	sub, err := p.g.nc.ChanSubscribe(turnSubject(p.runner, id, "event"), msgs)
	if err != nil {
		return core.TurnResult{}, fmt.Errorf("runner %s: %w", p.runner, err)
	}
	defer sub.Unsubscribe()
	sub.SetPendingLimits(-1, -1) // a turn's events are bounded by the turn
	t.Images = nil
	var rep turnReply
	if err := p.g.request(ctx, runnerSubject(p.runner, "turn"), turnRequest{ID: id, Plugin: p.id, Turn: t}, &rep); err != nil {
		return core.TurnResult{}, fmt.Errorf("runner %s: %w", p.runner, err)
	}
	if err := rep.Error.err(); err != nil {
		return core.TurnResult{}, err
	}
	return p.follow(ctx, id, msgs, emit)
}

// follow reads a turn's messages until it is done.
func (p *remotePlugin) follow(ctx context.Context, id string, msgs <-chan *nats.Msg, emit func(core.Event)) (core.TurnResult, error) {
	check := time.NewTicker(p.g.offlineAfter / 3)
	defer check.Stop()
	done := ctx.Done()
	var giveUp <-chan time.Time
	next := 1
	for {
		select {
		case m := <-msgs:
			var tm turnMessage
			if err := json.Unmarshal(m.Data, &tm); err != nil {
				return core.TurnResult{}, fmt.Errorf("runner %s: a malformed turn message: %w", p.runner, err)
			}
			if tm.Seq != next {
				return core.TurnResult{}, fmt.Errorf("runner %s: turn message %d came where %d was due: events were lost", p.runner, tm.Seq, next)
			}
			next++
			if tm.Done {
				res := core.TurnResult{}
				if tm.Result != nil {
					res = *tm.Result
				}
				return res, tm.Error.err()
			}
			if tm.Event != nil {
				emit(p.event(id, tm.Event))
			}
		case <-done:
			// Stop it there, then wait for its end, which keeps the
			// session's partial turn.
			p.g.nc.Publish(turnSubject(p.runner, id, "cancel"), nil)
			done, giveUp = nil, time.After(stopGrace)
		case <-giveUp:
			return core.TurnResult{}, context.Cause(ctx)
		case <-check.C:
			if _, seen, ok := p.g.online(p.runner); !ok {
				return core.TurnResult{}, core.Errorf("runner %s went offline during the turn (nothing heard from it for %s). "+
					"The conversation goes on there when it is back", p.runner, time.Since(seen).Round(time.Second))
			}
		}
	}
}

// event turns a wire event back into a core.Event; a question's answer
// goes back to the runner.
func (p *remotePlugin) event(id string, we *wireEvent) core.Event {
	ev := core.Event{Kind: we.Kind, Text: we.Text, Block: we.Block, ResumeToken: we.ResumeToken, Model: we.Model}
	if q := we.Question; q != nil {
		ev.Question = &core.Question{Tool: q.Tool, Summary: q.Summary, Detail: q.Detail, Options: q.Options,
			Answer: func(a core.Answer) {
				data, _ := json.Marshal(answerMessage{Question: q.ID, Answer: a})
				if err := p.g.nc.Publish(turnSubject(p.runner, id, "answer"), data); err != nil {
					p.g.logger.Warn("answer not sent", "runner", p.runner, "err", err)
				}
			}}
	}
	return ev
}

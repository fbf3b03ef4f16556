package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
)

// requestTimeout bounds a request to a runner or to JetStream.
const requestTimeout = 10 * time.Second

// GatewayConfig is how a gateway watches its runners.
type GatewayConfig struct {
	// OfflineAfter: a runner not heard for that long is offline; zero is
	// OfflineAfter.
	OfflineAfter time.Duration
	// Clock times the runners' silence; nil is the system clock.
	Clock core.Clock
	// Redactor blanks the gateway's own secrets out of what it sends to
	// runners: they never leave this machine.
	Redactor *core.Redactor
	Logger   *slog.Logger
}

// Gateway is the bot's side: it hears runners announce themselves and
// runs conversations' turns on them (core.Runners).
type Gateway struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	turns jetstream.KeyValue
	cfg   GatewayConfig
	sub   *nats.Subscription
	// events reads the messages of the turns this gateway starts.
	events *eventReader

	// ctx ends when the gateway closes; tellers are the cancels and
	// answers still on their way (tell).
	ctx     context.Context
	close   context.CancelFunc
	tellers sync.WaitGroup

	// started is when the gateway asked the runners up to announce
	// themselves; news is closed, and replaced, whenever one does.
	started time.Time
	news    chan struct{}

	mu      sync.Mutex
	runners map[string]*runnerState
	// unfinished are the turns an earlier gateway followed when it
	// stopped, until Unfinished hands them over.
	unfinished []*turnRecord
}

// runnerState is what the gateway knows of one runner.
type runnerState struct {
	info     Announcement
	lastSeen time.Time
	heard    bool
	online   bool
	// gone is closed when this run of the runner ends for the gateway:
	// silent for OfflineAfter, or heard again as another instance.
	gone  chan struct{}
	timer core.Timer
}

var _ core.Runners = (*Gateway)(nil)

// NewGateway makes the event stream and the bucket of followed turns
// (JetStream must be enabled on the server), loads the turns an earlier
// gateway left unfinished (asking the runners whether they took those it
// stopped waiting for), listens for runners and asks those already up to
// announce themselves.
func NewGateway(ctx context.Context, nc *nats.Conn, cfg GatewayConfig) (*Gateway, error) {
	if cfg.OfflineAfter <= 0 {
		cfg.OfflineAfter = OfflineAfter
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	cfg.Logger = core.OrDiscard(cfg.Logger)
	g := &Gateway{nc: nc, cfg: cfg, runners: map[string]*runnerState{}, started: time.Now(), news: make(chan struct{})}
	g.ctx, g.close = context.WithCancel(context.Background())
	err := g.openJetStream(ctx)
	if err == nil {
		g.confirmStarts(ctx)
		g.sub, err = nc.Subscribe(announceAll(), g.heard)
	}
	if err == nil {
		if err = firstErr(nc.Publish(discoverSubject(), nil), nc.Flush()); err != nil {
			g.sub.Unsubscribe()
		}
	}
	if err != nil {
		if g.events != nil {
			g.events.close()
		}
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return g, nil
}

// openJetStream makes (or finds) the event stream and the turns bucket,
// and reads the turns left unfinished.
func (g *Gateway) openJetStream(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	js, err := jetstream.New(g.nc)
	if err != nil {
		return fmt.Errorf("gateway: jetstream: %w", err)
	}
	g.js = js
	stream, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: eventStream, Subjects: []string{eventSubjects()},
		Description: "jake-bot: the messages of turns on runners", MaxAge: eventRetention, MaxBytes: eventBytes,
		Discard: jetstream.DiscardOld, Duplicates: 2 * time.Minute})
	if err != nil {
		return fmt.Errorf("jetstream stream %s (is JetStream enabled on the server?): %w", eventStream, err)
	}
	if err := g.readEvents(ctx, stream.CachedInfo().State.LastSeq); err != nil {
		return err
	}
	if g.turns, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: turnBucket, History: 1, TTL: eventRetention,
		Description: "jake-bot: the turns on runners a gateway follows"}); err != nil {
		return fmt.Errorf("jetstream bucket %s: %w", turnBucket, err)
	}
	return g.loadUnfinished(ctx)
}

// loadUnfinished reads the turns an earlier gateway left unfinished.
func (g *Gateway) loadUnfinished(ctx context.Context) error {
	keys, err := g.turns.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("jetstream bucket %s: %w", turnBucket, err)
	}
	for key := range keys.Keys() {
		e, err := g.turns.Get(ctx, key)
		var rec turnRecord
		if err == nil {
			err = json.Unmarshal(e.Value(), &rec)
		}
		if err != nil || rec.ID != key {
			g.cfg.Logger.Warn("unfinished turn unreadable; dropped", "key", key, "err", err)
			g.turns.Delete(ctx, key)
			continue
		}
		g.unfinished = append(g.unfinished, &rec)
	}
	if len(g.unfinished) > 0 {
		g.cfg.Logger.Info("turns on runners to follow again", "turns", len(g.unfinished))
	}
	return nil
}

// Close stops listening, and sending the cancels and answers not
// delivered yet.
func (g *Gateway) Close() {
	g.mu.Lock()
	g.close()
	g.mu.Unlock()
	g.tellers.Wait()
	g.sub.Unsubscribe()
	g.events.close()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, st := range g.runners {
		if st.timer != nil {
			st.timer.Stop()
		}
	}
}

func (g *Gateway) heard(m *nats.Msg) {
	var a Announcement
	if json.Unmarshal(m.Data, &a) != nil || announceSubject(a.Name) != m.Subject {
		return // a runner speaks only for itself
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state(a.Name)
	changed := st.info.Instance != a.Instance
	switch {
	case !st.heard:
		g.cfg.Logger.Info("runner connected", "runner", a.Name, "roots", a.Roots)
	case !st.online:
		g.cfg.Logger.Info("runner back", "runner", a.Name, "offline_for", g.cfg.Clock.Now().Sub(st.lastSeen))
	case changed:
		g.cfg.Logger.Warn("runner restarted", "runner", a.Name)
	}
	if st.online && changed {
		close(st.gone) // its turns' followers check whether theirs still runs
	}
	if !st.online || changed {
		st.gone = make(chan struct{})
	}
	st.info, st.heard, st.online = a, true, true
	st.lastSeen = g.cfg.Clock.Now()
	g.watch(a.Name, st)
	close(g.news)
	g.news = make(chan struct{})
}

// discoverWait is how long after its start a gateway waits for a runner
// it has not heard yet: a conversation's first message after a restart
// may come before its runner has answered the call to announce itself.
const discoverWait = 5 * time.Second

// awaitHeard waits, within discoverWait of the gateway's start, until
// runner has been heard; it reports whether it has.
func (g *Gateway) awaitHeard(runner string) bool {
	deadline := time.NewTimer(time.Until(g.started.Add(discoverWait)))
	defer deadline.Stop()
	for {
		g.mu.Lock()
		st, known := g.runners[runner]
		heard, news := known && st.heard, g.news
		g.mu.Unlock()
		if heard {
			return true
		}
		select {
		case <-news:
		case <-deadline.C:
			return false
		case <-g.ctx.Done():
			return false
		}
	}
}

// state returns runner's state, made when it is first needed (by a turn
// an earlier gateway left, before the runner is heard). g.mu is held.
func (g *Gateway) state(runner string) *runnerState {
	st, ok := g.runners[runner]
	if !ok {
		st = &runnerState{online: true, gone: make(chan struct{}), lastSeen: g.cfg.Clock.Now()}
		g.runners[runner] = st
		g.watch(runner, st)
	}
	return st
}

// watch declares runner offline once OfflineAfter passes without its
// being heard. g.mu is held.
func (g *Gateway) watch(runner string, st *runnerState) {
	if st.timer != nil {
		st.timer.Stop()
	}
	seen := st.lastSeen
	st.timer = g.cfg.Clock.AfterFunc(g.cfg.OfflineAfter, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !st.online || !st.lastSeen.Equal(seen) {
			return
		}
		st.online = false
		close(st.gone)
		g.cfg.Logger.Warn("runner offline", "runner", runner, "silent_for", g.cfg.OfflineAfter)
	})
}

// runnerNow is what the gateway knows of runner now, and the channel
// closed when that changes (offline, restarted).
func (g *Gateway) runnerNow(runner string) (info Announcement, lastSeen time.Time, online bool, gone <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state(runner)
	return st.info, st.lastSeen, st.online, st.gone
}

// List describes the runners heard of.
func (g *Gateway) List() []core.RunnerInfo {
	g.mu.Lock()
	var out []core.RunnerInfo
	for name, st := range g.runners {
		if !st.heard {
			continue
		}
		ri := core.RunnerInfo{Name: name, Roots: st.info.Roots, LastSeen: st.lastSeen, Online: st.online}
		for _, p := range st.info.Plugins {
			ri.Plugins = append(ri.Plugins, p.ID)
		}
		out = append(out, ri)
	}
	g.mu.Unlock()
	slices.SortFunc(out, func(a, b core.RunnerInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Plugin is pluginID as runner serves it, for m's author.
func (g *Gateway) Plugin(runner, pluginID string, m core.Message, admin bool) (core.Plugin, error) {
	g.awaitHeard(runner)
	g.mu.Lock()
	st, known := g.runners[runner]
	var info Announcement
	var seen time.Time
	heard, online := false, false
	if known {
		info, seen, heard, online = st.info, st.lastSeen, st.heard, st.online
	}
	g.mu.Unlock()
	switch {
	case !heard:
		return nil, core.Errorf("no runner %q has connected (/runners lists those that have)", runner)
	case !online:
		return nil, core.Errorf("runner %s is offline (last heard %s ago); the conversation goes on there when it is back",
			runner, g.cfg.Clock.Now().Sub(seen).Round(time.Second))
	}
	for _, p := range info.Plugins {
		if p.ID == pluginID {
			rp := &remotePlugin{g: g, runner: runner, id: p.ID, name: p.Name, m: m, admin: admin, readOnly: p.ReadOnly}
			for _, md := range p.Modes {
				rp.modes = append(rp.modes, core.Mode{Name: md.Name, Help: md.Help, Bypass: md.Bypass})
			}
			return rp, nil
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

// Resolve asks runner for path inside the roots the user may work in
// there.
func (g *Gateway) Resolve(ctx context.Context, runner, path string, admin bool) (string, error) {
	var rep resolveReply
	if err := g.request(ctx, runnerSubject(runner, "resolve"), resolveRequest{Path: path, Admin: admin}, &rep); err != nil {
		return "", fmt.Errorf("runner %s: %w", runner, err)
	}
	return rep.Workdir, rep.Error.err()
}

// tellFor bounds how long a cancel or an answer is sent again while its
// runner is out of reach; tellAttempt, how long each try waits for the
// runner's acknowledgement.
const (
	tellFor     = time.Hour
	tellAttempt = 2 * time.Second
)

// tell sends msg to runner's what subject until the runner acknowledges
// it: a cancel or an answer lost while the runner is out of reach (a
// partition, a NATS restart) would leave a turn running, or a question
// waiting, with nobody told. It gives up when the runner comes back as
// another instance than the turn's (the turn ended with the old one),
// after tellFor, or when the gateway closes.
func (g *Gateway) tell(runner, instance, what string, msg any) {
	data, _ := json.Marshal(msg)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ctx.Err() != nil {
		return
	}
	g.tellers.Add(1)
	go func() {
		defer g.tellers.Done()
		deadline := time.Now().Add(tellFor)
		wait := 100 * time.Millisecond
		for {
			ctx, cancel := context.WithTimeout(g.ctx, tellAttempt)
			_, err := g.nc.RequestWithContext(ctx, runnerSubject(runner, what), data)
			cancel()
			if err == nil {
				return
			}
			info, _, _, _ := g.runnerNow(runner)
			if g.ctx.Err() != nil || errors.Is(err, nats.ErrConnectionClosed) || time.Now().After(deadline) ||
				instance != "" && info.Instance != "" && info.Instance != instance {
				g.cfg.Logger.Warn(what+" not delivered", "runner", runner, "err", err)
				return
			}
			select {
			case <-g.ctx.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, 5*time.Second)
		}
	}()
}

// request sends a request to a runner and decodes its reply, waiting at
// most requestTimeout.
func (g *Gateway) request(ctx context.Context, subject string, req, reply any) error {
	return g.requestWithin(ctx, requestTimeout, subject, req, reply)
}

// requestWithin is request, waiting at most wait.
func (g *Gateway) requestWithin(ctx context.Context, wait time.Duration, subject string, req, reply any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	m, err := g.nc.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return g.unreachable(subject, err)
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(m.Data, reply)
}

// unreachable is the error of a request nothing listened to: its runner
// has stopped or is cut off, and is not yet counted offline (that takes
// OfflineAfter). Nothing reached the runner, and nothing keeps the
// request to send it again: the user is told so, and when the runner was
// last heard.
func (g *Gateway) unreachable(subject string, err error) error {
	runner, _, _ := strings.Cut(strings.TrimPrefix(subject, prefix+"runner."), ".")
	g.mu.Lock()
	st, known := g.runners[runner]
	heard := known && st.heard
	var seen time.Time
	if heard {
		seen = st.lastSeen
	}
	g.mu.Unlock()
	when := "never heard from"
	if heard {
		when = "last seen " + lastSeen(seen, g.cfg.Clock.Now())
	}
	return &core.UserError{Err: err, Msg: fmt.Sprintf("runner %s is offline (%s): your message was not sent to it. "+
		"Send it again once /runners shows it online.", runner, when)}
}

// lastSeen is when a runner was last heard, in UTC: the time of day, and
// the date too unless that is today's.
func lastSeen(seen, now time.Time) string {
	seen, now = seen.UTC(), now.UTC()
	if seen.YearDay() == now.YearDay() && seen.Year() == now.Year() {
		return seen.Format("15:04:05 UTC")
	}
	return seen.Format("2006-01-02 15:04:05 UTC")
}

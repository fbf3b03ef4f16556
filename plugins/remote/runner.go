package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/workspace"
)

// AnnounceInterval is how often a runner says it is there; a gateway
// counts a runner silent for OfflineAfter as gone.
const (
	AnnounceInterval = 5 * time.Second
	OfflineAfter     = 15 * time.Second
)

// RunnerConfig is what a runner serves and by which rules: its own,
// whatever a gateway asks.
type RunnerConfig struct {
	// Name is what the runner answers to (box2 in "box2:~/src").
	Name    string
	Plugins *core.Registry
	// Workspace is the folders here: its roots bound every workdir.
	// Users other than the gateway's admins work only in the root
	// holding its DefaultWorkdir (else the first), as on the gateway's
	// own machine.
	Workspace workspace.Machine
	// AllowBypassModes lets users other than admins run turns in a mode
	// in which tools run with nobody approving them.
	AllowBypassModes bool
	// Redactor blanks the runner's own secrets out of everything it
	// sends: a CLI printing the runner's API key does not reach the chat.
	Redactor *core.Redactor
	// AttachmentMaxBytes bounds the files sent with one message,
	// together, and a file /file reads; zero is
	// core.DefaultAttachmentMaxBytes.
	AttachmentMaxBytes int64
	// AgentTools is the bot's MCP server (issue 31), served beside the
	// CLI of each turn whose gateway answers its calls; nil serves none.
	AgentTools core.AgentTools
	// Interval is how often it announces itself; zero is
	// AnnounceInterval.
	Interval time.Duration
	Logger   *slog.Logger
}

// Runner serves turns sent to it over NATS with its local plugins, in
// its own roots: whatever a gateway asks, a workdir outside them is
// refused here.
type Runner struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	cfg      RunnerConfig
	instance string
	logger   *slog.Logger

	mu sync.Mutex
	// sessions holds the running turn of each session (plugin/token): a
	// session runs one turn at a time.
	sessions map[string]*runnerTurn
	// turns are the turns running here, by id; cancelled, the turns
	// cancelled before they came, with when.
	turns     map[string]*runnerTurn
	cancelled map[string]time.Time
	// stopping: Run is returning; no turn starts, and wg counts no more.
	stopping bool
	wg       sync.WaitGroup
	// sender puts the turns' messages into the stream, while Run runs.
	sender *sender

	upMu    sync.Mutex
	uploads map[string]*upload
	// uploadsClosed is set once Run has ended: no upload starts after.
	uploadsClosed bool
}

// NewRunner returns a runner on nc, which must have been connected with
// RunnerInbox(cfg.Name).
func NewRunner(nc *nats.Conn, cfg RunnerConfig) (*Runner, error) {
	if !validName(cfg.Name) {
		return nil, fmt.Errorf("runner name %q: want letters, digits, - and _ (RUNNER_NAME)", cfg.Name)
	}
	if !strings.HasPrefix(nc.NewInbox(), runnerInbox(cfg.Name)+".") {
		return nil, fmt.Errorf("runner %s: connect with remote.RunnerInbox(%q), so its NATS user needs no other subjects", cfg.Name, cfg.Name)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("runner: jetstream: %w", err)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = AnnounceInterval
	}
	if cfg.AttachmentMaxBytes <= 0 {
		cfg.AttachmentMaxBytes = core.DefaultAttachmentMaxBytes
	}
	cfg.Logger = core.OrDiscard(cfg.Logger)
	return &Runner{nc: nc, js: js, cfg: cfg, instance: newID(), logger: cfg.Logger.With("runner", cfg.Name),
		sessions: map[string]*runnerTurn{}, turns: map[string]*runnerTurn{}, cancelled: map[string]time.Time{},
		uploads: map[string]*upload{}}, nil
}

// Run serves until ctx is done; then it cancels the turns it runs and
// waits for them.
func (r *Runner) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	handlers := map[string]nats.MsgHandler{
		discoverSubject():                          func(*nats.Msg) { r.announce() },
		runnerSubject(r.cfg.Name, "resolve"):       r.resolve,
		runnerSubject(r.cfg.Name, "conversations"): func(m *nats.Msg) { r.conversations(ctx, m) },
		runnerSubject(r.cfg.Name, "turn"):          func(m *nats.Msg) { r.startTurn(ctx, m) },
		runnerSubject(r.cfg.Name, "diff"):          func(m *nats.Msg) { r.diff(ctx, m) },
		runnerSubject(r.cfg.Name, "file"):          r.file,
		runnerSubject(r.cfg.Name, "upload"):        func(m *nats.Msg) { r.upload(ctx, m) },
		runnerSubject(r.cfg.Name, "cancel"):        r.cancelTurn,
		runnerSubject(r.cfg.Name, "worktree"):      func(m *nats.Msg) { r.worktree(ctx, m) },
		runnerSubject(r.cfg.Name, "answer"):        r.answerTurn,
		runnerSubject(r.cfg.Name, "steer"):         r.steerTurn,
	}
	// Deferred first, so run last: once nothing more can come.
	defer r.closeUploads()
	r.sender = newSender(r, ctx.Done())
	defer r.sender.close() // after the turns, each waiting for its end to be sent
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
	r.logger.Info("runner serving", "plugins", r.cfg.Plugins.IDs(), "roots", []string(r.cfg.Workspace.Roots))
	tick := time.NewTicker(r.cfg.Interval)
	defer tick.Stop()
	for {
		r.announce()
		select {
		case <-tick.C:
			r.dropIdleUploads()
		case <-ctx.Done():
			cancel()
			r.mu.Lock()
			r.stopping = true
			r.mu.Unlock()
			r.wg.Wait()
			return nil
		}
	}
}

// startTurn handles a turn request in its own goroutine: handled one
// after the other, each waiting for a round trip to the server, a
// thousand turns asked at once made the last wait past the gateway's
// requestTimeout, and they failed (issue 33).
func (r *Runner) startTurn(ctx context.Context, m *nats.Msg) {
	// Counted under the lock Run takes to stop: a request handled as Run
	// returns must not add to the turns Run waits for beside its Wait.
	r.mu.Lock()
	if r.stopping {
		r.mu.Unlock()
		r.respond(m, turnReply{Error: &wireError{Message: "runner " + r.cfg.Name + " is stopping", User: true}})
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		r.turn(ctx, m)
	}()
}

func (r *Runner) announce() {
	a := Announcement{Name: r.cfg.Name, Instance: r.instance, Roots: r.userRoots(false)}
	for _, root := range r.cfg.Workspace.Roots {
		if root != a.Roots[0] {
			a.Roots = append(a.Roots, root)
		}
	}
	for _, id := range r.cfg.Plugins.IDs() {
		p, _ := r.cfg.Plugins.Get(id)
		info := PluginInfo{ID: p.ID(), Name: p.Name(), ReadOnly: readOnlyMeans(p)}
		if mp, ok := p.(core.ModeProvider); ok {
			for _, md := range mp.Modes() {
				info.Modes = append(info.Modes, wireMode{Name: md.Name, Help: md.Help, Bypass: md.Bypass})
			}
		}
		a.Plugins = append(a.Plugins, info)
	}
	data, _ := json.Marshal(a)
	if err := r.nc.Publish(announceSubject(r.cfg.Name), data); err != nil {
		r.logger.Warn("announce", "err", err)
	}
}

// space is what a user may reach of the folders here.
func (r *Runner) space(admin bool) workspace.Space {
	return r.cfg.Workspace.For(admin)
}

// userRoots are the roots a user may work in here.
func (r *Runner) userRoots(admin bool) core.Roots { return r.space(admin).Roots }

// workdir resolves path inside the roots the user may work in here.
func (r *Runner) workdir(path string, admin bool) (string, error) {
	s := r.space(admin)
	base := ""
	if s.Roots.Contains(r.cfg.Workspace.DefaultWorkdir) {
		base = r.cfg.Workspace.DefaultWorkdir
	}
	wd, err := s.Resolve(path, base)
	return wd, r.workError(err)
}

// workError is core.WorkError, saying where.
func (r *Runner) workError(err error) error {
	if err = core.WorkError(err); core.IsUserError(err) {
		return &core.UserError{Msg: "on " + r.cfg.Name + ": " + core.UserMessage(err), Err: err}
	}
	return err
}

func (r *Runner) resolve(m *nats.Msg) {
	var req resolveRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		r.respond(m, resolveReply{Error: toWire(err)})
		return
	}
	wd, err := r.workdir(req.Path, req.Admin)
	r.respond(m, resolveReply{Workdir: wd, Error: r.wireError(err)})
}

func (r *Runner) conversations(ctx context.Context, m *nats.Msg) {
	var req listRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		r.respond(m, listReply{Error: toWire(err)})
		return
	}
	p, ok := r.cfg.Plugins.Get(req.Plugin)
	wd, err := r.workdir(req.Workdir, req.Admin)
	if !ok {
		err = core.Errorf("runner %s has no plugin %q", r.cfg.Name, req.Plugin)
	}
	if err != nil {
		r.respond(m, listReply{Error: r.wireError(err)})
		return
	}
	infos, err := p.Conversations(ctx, wd)
	for i := range infos {
		infos[i].Title = r.cfg.Redactor.Redact(infos[i].Title)
	}
	r.respond(m, listReply{Conversations: infos, Error: r.wireError(err)})
}

// wireError is err for the wire, without the runner's secrets.
func (r *Runner) wireError(err error) *wireError {
	we := toWire(err)
	if we != nil {
		we.Message = r.cfg.Redactor.Redact(we.Message)
	}
	return we
}

func (r *Runner) respond(m *nats.Msg, v any) {
	data, _ := json.Marshal(v)
	if err := m.Respond(data); err != nil {
		r.logger.Warn("reply not sent", "subject", m.Subject, "err", err)
	}
}

// errSuperseded stops a turn whose session a newer turn continues: its
// gateway gave up on it (the runner was out of reach), and one session
// runs one turn at a time.
var errSuperseded = errors.New("a newer turn of its session started")

// check refuses what the runner's own rules forbid: a plugin it lacks, a
// workdir outside the user's roots here, a bypass mode for a user who is
// not an admin, a read-only turn of a plugin with no means to keep it so,
// a session id not of the CLI's form. It returns the turn as it runs here.
func (r *Runner) check(req turnRequest) (core.Plugin, core.Turn, error) {
	p, ok := r.cfg.Plugins.Get(req.Plugin)
	if !ok {
		return nil, core.Turn{}, core.Errorf("runner %s has no plugin %q", r.cfg.Name, req.Plugin)
	}
	t := req.Turn
	wd, err := r.workdir(t.Workdir, req.Admin)
	if err != nil {
		return nil, core.Turn{}, err
	}
	t.Workdir, t.Images = wd, r.uploadedImages(wd, t.Images)
	if !req.Admin && !r.cfg.AllowBypassModes {
		for _, md := range core.ModesOf(p) {
			if md.Bypass && strings.EqualFold(md.Name, t.Mode) {
				return nil, core.Turn{}, core.Errorf("on %s: mode %s runs tools with nobody approving them: only admins may choose it", r.cfg.Name, md.Name)
			}
		}
	}
	if t.ReadOnly && readOnlyMeans(p) == "" {
		return nil, core.Turn{}, core.Errorf("on %s: %w", r.cfg.Name, core.ErrNoReadOnly)
	}
	if c, ok := p.(core.SessionIDChecker); ok && t.SessionID != "" {
		if err := c.CheckSessionID(t.SessionID); err != nil {
			return nil, core.Turn{}, err
		}
	}
	return p, t, nil
}

// readOnlyMeans is p's means to run a read-only turn, or empty.
func readOnlyMeans(p core.Plugin) string {
	if ro, ok := p.(core.ReadOnlyPlugin); ok {
		if means, ok := ro.ReadOnlyMeans(); ok {
			return means
		}
	}
	return ""
}

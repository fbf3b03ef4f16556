package bot

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/bot/agenttools"
	"github.com/jake-bot/jake-bot/bot/audit"
	"github.com/jake-bot/jake-bot/bot/cronexpr"
	"github.com/jake-bot/jake-bot/bot/metrics"
	"github.com/jake-bot/jake-bot/bot/state"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/console"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// Main is one run of the bot, in the manner of wtf's cmd/wtfd Main: what build made, for run to use and close
// to release.
type Main struct {
	cfg   Config
	stdio Stdio
	// again says this gateway served before and lost the lease (it was
	// cut off from NATS, most likely): it waits for NATS to be back.
	again bool

	logger   *slog.Logger
	level    slog.LevelVar
	policy   policy
	plugins  *core.Registry
	access   *core.Access
	convs    *core.State
	platform []core.Platform
	observe  core.Observers
	metrics  *metrics.Metrics
	router   *core.Router
	// tools is the bot's MCP server for the agents (AGENT_TOOLS); nil
	// when off.
	tools *agenttools.Server
	// nc is the NATS connection and runners the machines it reaches;
	// nil without NATS_URL.
	nc      *nats.Conn
	runners *remote.Gateway
	// lease makes this gateway the active one of those on nc, since
	// holder took it (standby.go); nil without NATS_URL.
	lease  *remote.Lease
	holder remote.Holder
	// localTurns records the turns this gateway runs itself, for the
	// next if it dies; mirror keeps the state (nil: STATE_FILE=off).
	localTurns *remote.LocalTurns
	mirror     *state.Mirror
	// webSignIns keeps the web page's sign-ins in NATS; nil without.
	webSignIns web.SignIns
	// runCtx is what platforms and turns run under: the signal does not
	// cancel it, so shutdown stops them in order, after running turns had
	// their grace and their chats were told.
	runCtx  context.Context
	stopRun context.CancelFunc
	// warmMax is how many warm CLIs wait at most, and warmMaxFrom where
	// that number came from (WARM_MAX, or the machine's memory).
	warmMax     int
	warmMaxFrom string
	// gcPercent is the collector's target, and gcFrom where it came from
	// (GOGC, or the machine's memory).
	gcPercent int
	gcFrom    string
	// memLimit is the soft memory limit (0: none), and memLimitFrom
	// where it came from (SetMemoryLimit).
	memLimit     int64
	memLimitFrom string
	// closers release what build opened; close runs them last first.
	closers []func()
}

// policy is the workdir and rate policy read from the configuration.
type policy struct {
	roots          core.Roots
	defaultWorkdir string
	worktreeDir    string
	userRate       core.Rate
}

// build makes every part of the bot from m.cfg. What it opened before an
// error is released by close.
func (m *Main) build(ctx context.Context) error {
	level, err := parseLevel(m.cfg.LogLevel)
	if err != nil {
		return err
	}
	m.level.Set(level)
	m.logger = slog.New(slog.NewTextHandler(newRedactor(m.stdio.Err, m.cfg.Secrets), &slog.HandlerOptions{Level: &m.level}))
	if m.policy, err = readPolicy(m.cfg); err != nil {
		return err
	}
	m.warmMax, m.warmMaxFrom = warmMax(m.cfg.WarmMax, readMemInfo())
	m.gcPercent, m.gcFrom = SetGCPercent()
	if m.cfg.Sandbox, err = m.cfg.ChooseSandbox(ctx); err != nil {
		return err
	}
	logSandbox(m.cfg.Sandbox, m.logger)
	m.memLimit, m.memLimitFrom = SetMemoryLimit()
	all, err := Plugins(m.cfg, m.logger)
	if err != nil {
		return err
	}
	if m.plugins, err = core.NewRegistry(all...); err != nil {
		return err
	}
	if _, ok := m.plugins.Get(m.cfg.ReviewPlugin); m.cfg.ReviewPlugin != "" && !ok {
		return fmt.Errorf("REVIEW_PLUGIN=%q: no such plugin is configured (%s)", m.cfg.ReviewPlugin, strings.Join(m.plugins.IDs(), ", "))
	}
	m.access = core.NewAccess()
	m.access.Admin(console.Name, console.User)
	if err := m.connectNATS(ctx); err != nil {
		return err
	}
	if err := m.connectRunners(ctx); err != nil {
		return err
	}
	if err := m.loadState(ctx); err != nil {
		return err
	}
	if err := m.buildObservers(); err != nil {
		return err
	}
	if err := m.startTools(); err != nil {
		return err
	}
	m.runCtx, m.stopRun = context.WithCancel(context.WithoutCancel(ctx))
	m.closers = append(m.closers, m.stopRun)
	if warning := m.cfg.BudgetWarning(); warning != "" {
		m.logger.Warn(warning)
	}
	// The router comes before the platforms, whose adapters ask it
	// (core.Lookup); the platforms' users are granted before any message.
	m.router = core.NewRouter(m.runCtx, m.routerConfig(), m.convs)
	if err := m.buildPlatforms(); err != nil {
		return err
	}
	if m.metrics != nil {
		if m.lease != nil {
			m.metrics.Gateway(m.holder.Name, active(m.lease))
		}
		h, err := startHealth(m.cfg.HealthAddr, healthz(m.platform), m.metrics.Handler(), m.logger)
		if err != nil {
			return err
		}
		m.closers = append(m.closers, h.close)
	}
	return nil
}

// readPolicy resolves the allowed roots (the start directory when none
// are set), the default and worktree directories inside them, and the
// user rate.
func readPolicy(cfg Config) (policy, error) {
	var p policy
	roots := cfg.AllowedRoots
	if len(roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return p, fmt.Errorf("allowed roots: %w", err)
		}
		roots = []string{wd}
	}
	var err error
	if p.roots, err = core.NewRoots(roots); err != nil {
		return p, err
	}
	if err := cfg.CheckSecretFiles(p.roots); err != nil {
		return p, err
	}
	if cfg.DefaultWorkdir != "" {
		if p.defaultWorkdir, err = p.roots.Resolve(cfg.DefaultWorkdir, ""); err != nil {
			return p, fmt.Errorf("DEFAULT_WORKDIR: %w", err)
		}
	}
	if cfg.WorktreeDir != "" {
		if p.worktreeDir, err = p.roots.Resolve(cfg.WorktreeDir, ""); err != nil {
			return p, fmt.Errorf("WORKTREE_DIR: %w", err)
		}
	}
	if p.userRate, err = core.ParseRate(cfg.UserRate); err != nil {
		return p, fmt.Errorf("USER_RATE: %w", err)
	}
	return p, nil
}

// buildPlatforms makes the configured chat platforms, or the console when
// there are none.
func (m *Main) buildPlatforms() error {
	var list []core.Plugin
	for _, id := range m.plugins.IDs() {
		p, _ := m.plugins.Get(id)
		list = append(list, p)
	}
	var err error
	deps := platformDeps{Plugins: list, access: m.access, Lookup: m.router, Logger: m.logger, SignIns: m.webSignIns}
	if m.stdio.ErrTTY {
		deps.SignIn = m.stdio.Err
	}
	m.platform, err = buildPlatforms(m.cfg, deps)
	if err != nil {
		return err
	}
	if len(m.platform) == 0 {
		typed := m.stdio.Typed
		switch m.cfg.ConsoleInput {
		case "typed":
			typed = true
		case "script":
			typed = false
		}
		m.platform = []core.Platform{console.New(console.Options{In: m.stdio.In, Out: m.stdio.Out, TTY: m.stdio.TTY, Typed: typed})}
		if m.cfg.LogLevel == "" {
			// The console shares the terminal with its logs: only what
			// the person must see interleaves with the conversation.
			m.level.Set(slog.LevelWarn)
		}
	}
	for _, p := range m.platform {
		m.access.Report(m.logger, p.Name(), allowVar(p.Name()))
	}
	return nil
}

// buildObservers opens the audit log and makes the metrics. The metrics
// observe the router, which needs them as its observer: their stats are
// read through m.router, which exists before anything serves them.
func (m *Main) buildObservers() error {
	if m.cfg.AuditLog != "" {
		a, err := audit.Open(m.cfg.AuditLog, m.cfg.AuditLogText, core.NewRedactor(m.cfg.Secrets))
		if err != nil {
			return err
		}
		m.closers = append(m.closers, func() {
			if err := a.Close(); err != nil {
				m.logger.Error("audit log", "err", err)
			}
		})
		m.observe = append(m.observe, a)
	}
	if m.cfg.HealthAddr != "" {
		m.metrics = metrics.New(func() core.Stats { return m.router.Stats() }, cliproc.Running,
			func() int64 { return cliproc.TreeRSS(m.router.WarmPIDs()) })
		m.observe = append(m.observe, m.metrics)
	}
	return nil
}

// startTools starts the agents' MCP server, unless AGENT_TOOLS=off.
func (m *Main) startTools() error {
	var err error
	if m.tools, err = startAgentTools(m.cfg, m.logger); err != nil || m.tools == nil {
		return err
	}
	m.closers = append(m.closers, func() { m.tools.Close() })
	return nil
}

// routerConfig is the router's part of the configuration.
func (m *Main) routerConfig() core.RouterConfig {
	cfg := m.cfg
	var runners core.Runners
	if m.runners != nil {
		runners = m.runners // a nil *Gateway must not become a non-nil interface
	}
	rc := core.RouterConfig{
		Runners:             runners,
		ParseCron:           cronexpr.Parse,
		Plugins:             m.plugins,
		Access:              m.access,
		Roots:               m.policy.roots,
		DefaultWorkdir:      m.policy.defaultWorkdir,
		TurnTimeout:         cfg.TurnTimeout,
		IdleTimeout:         cfg.TurnIdleTimeout,
		QueueLimit:          cfg.QueueLimit,
		MaxRunningTurns:     cfg.MaxRunningTurns,
		MaxUserTurns:        cfg.MaxUserTurns,
		Ask:                 cfg.Approvals != "auto",
		WarmTTL:             m.warmTTL(),
		WarmMax:             m.warmMax,
		WarmMaxFrom:         m.warmMaxFrom,
		WarmPressure:        memoryShort,
		StopDeadline:        cfg.ShutdownDeadline,
		ApprovalTimeout:     cfg.ApprovalTimeout,
		AllowBypassModes:    cfg.AllowBypassModes,
		Busy:                cfg.Busy,
		BackgroundLimit:     cfg.BackgroundLimit,
		Worktrees:           cfg.Worktrees == "always",
		WorktreeDir:         m.policy.worktreeDir,
		NotifyAfter:         notifyAfter(cfg.NotifyAfter),
		LimitWarn:           cfg.LimitWarn,
		UnattendedApprovals: cfg.UnattendedApprovals,
		Reactions:           cfg.Reactions,
		ReviewPlugin:        cfg.ReviewPlugin,
		ReviewRounds:        cfg.ReviewRounds,
		Budgets:             cfg.budgets(),
		AttachmentMaxBytes:  cfg.AttachmentMaxBytes,
		Transcribe:          transcriber(cfg.TranscribeCmd, cfg.ChildEnv),
		Sandbox:             cfg.Sandbox.Summary(),
		Gateway:             m.gatewayLine(),
		LongReplyPages:      cfg.LongReplyPages,
		Document:            formatter.MarkdownText,
		UserRate:            m.policy.userRate,
		MaxMessageBytes:     cfg.MaxMessageBytes,
		Observer:            m.observe,
		AgentTools:          agentTools(m.tools),
		Redactor:            core.NewRedactor(cfg.Secrets),
		Clock:               cfg.Clock,
		Timers:              cfg.Timers,
		Logger:              m.logger,
	}
	rc.UnattendedTurnsPerDay = cfg.UnattendedTurnsPerDay
	if m.localTurns != nil {
		rc.LocalTurns = m.localTurns
		if m.mirror != nil {
			rc.StoreSchedules = m.mirror.Flush
		}
	}
	return rc
}

// warmTTL is WARM_TTL, or zero (no warm CLIs) when warmMax is zero: the
// router takes a zero WarmMax for its default.
func (m *Main) warmTTL() time.Duration {
	if m.warmMax == 0 {
		return 0
	}
	return m.cfg.WarmTTL
}

// agentTools is s as the router takes it: a nil *Server must not become a
// non-nil interface.
func agentTools(s *agenttools.Server) core.AgentTools {
	if s == nil {
		return nil
	}
	return s
}

// run serves the platforms until their input ends and the turns are done,
// or ctx is cancelled; then it winds the router down.
func (m *Main) run(ctx context.Context) error {
	m.logger.Info("jakebot started", "platforms", len(m.platform), "plugins", m.plugins.IDs(),
		"roots", []string(m.policy.roots), "conversations", m.convs.Len(), "user_rate", m.policy.userRate.String(),
		"warm_max", m.warmMax, "warm_max_from", m.warmMaxFrom, "gc_percent", m.gcPercent, "gc_percent_from", m.gcFrom,
		"memory_limit_mib", m.memLimit>>20, "memory_limit_from", m.memLimitFrom)
	var wg sync.WaitGroup
	errs := make(chan error, len(m.platform))
	for _, p := range m.platform {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Run(m.runCtx, m.router.Attach(p)); err != nil {
				errs <- fmt.Errorf("%s: %w", p.Name(), err)
			}
		}()
	}
	platformsDone := make(chan struct{})
	go func() {
		wg.Wait()
		close(platformsDone)
	}()
	select {
	case <-platformsDone:
		// Every platform's input ended (the console at EOF): let the
		// running and queued turns finish, unless a signal comes first.
		idle := make(chan struct{})
		go func() {
			m.router.Wait()
			close(idle)
		}()
		select {
		case <-idle:
		case <-ctx.Done():
			windDown(m.router, m.cfg, m.logger)
		}
	case <-ctx.Done():
		windDown(m.router, m.cfg, m.logger)
		m.stopRun()
		<-platformsDone
	case <-m.leaseLost():
		m.stepDown(platformsDone)
		return errLeaseLost
	}
	// No warm CLI outlives the bot.
	m.router.Shutdown()
	close(errs)
	for err := range errs {
		return err
	}
	m.logger.Info("jakebot stopped")
	return nil
}

// leaseLost is closed when this gateway lost the lease; nil (never)
// without NATS_URL.
func (m *Main) leaseLost() <-chan struct{} {
	if m.lease == nil {
		return nil
	}
	return m.lease.Lost()
}

// stepDown stops serving at once, before the lease can expire for the
// standby: no wind-down, no notice. The turns end as in a shutdown (those
// on runners go on there, for the next gateway to follow), the platforms
// stop, and the NATS connection closes at once, so that nothing this
// gateway queued while cut off (a state save, a turn's record, an answer)
// reaches NATS after the next gateway has read it.
func (m *Main) stepDown(platformsDone <-chan struct{}) {
	m.logger.Error("lease lost: stopping the platforms and the turns", "err", m.lease.Err())
	m.localTurns.Keep() // the next gateway tells their chats
	m.router.Shutdown()
	m.stopRun()
	m.nc.Close()
	<-platformsDone
}

// close releases what build opened, last first.
func (m *Main) close() {
	for i := len(m.closers) - 1; i >= 0; i-- {
		m.closers[i]()
	}
}

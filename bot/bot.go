// Package bot wires jake-bot together: it builds the configured plugins and
// platforms, attaches each platform to one router, and owns start-up and
// shutdown.
package bot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/bot/audit"
	"github.com/jake-bot/jake-bot/bot/metrics"
	"github.com/jake-bot/jake-bot/bot/state"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/console"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Stdio is the console's input and output, and where logs go.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// TTY says whether In and Out are a terminal.
	TTY bool
	// Typed says whether a person types In (a terminal), so that lines go
	// to the bot at once; otherwise In is a script whose lines run in
	// order, each once the one before it is done.
	Typed bool
}

// stateInterval is the debounce of state file writes.
const stateInterval = 500 * time.Millisecond

// Run runs the bot until its platforms' input ends and every turn has
// finished, or until ctx is cancelled (SIGINT, SIGTERM). Then it shuts
// down gently: no new turns, a notice to every running turn's chat,
// ShutdownGrace for running turns to finish, then they are cancelled. It
// returns nil after a clean shutdown.
func Run(ctx context.Context, cfg Config, stdio Stdio) error {
	level, err := parseLevel(cfg.LogLevel)
	if err != nil {
		return err
	}
	var levelVar slog.LevelVar
	levelVar.Set(level)
	logger := slog.New(slog.NewTextHandler(newRedactor(stdio.Err, cfg.Secrets), &slog.HandlerOptions{Level: &levelVar}))

	roots := cfg.AllowedRoots
	if len(roots) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("allowed roots: %w", err)
		}
		roots = []string{wd}
	}
	allowed, err := core.NewRoots(roots)
	if err != nil {
		return err
	}
	if err := cfg.CheckSecretFiles(allowed); err != nil {
		return err
	}
	defaultWorkdir := ""
	if cfg.DefaultWorkdir != "" {
		if defaultWorkdir, err = allowed.Resolve(cfg.DefaultWorkdir, ""); err != nil {
			return fmt.Errorf("DEFAULT_WORKDIR: %s", core.UserMessage(err))
		}
	}
	worktreeDir := ""
	if cfg.WorktreeDir != "" {
		if worktreeDir, err = allowed.Resolve(cfg.WorktreeDir, ""); err != nil {
			return fmt.Errorf("WORKTREE_DIR: %s", core.UserMessage(err))
		}
	}
	userRate, err := core.ParseRate(cfg.UserRate)
	if err != nil {
		return fmt.Errorf("USER_RATE: %w", err)
	}

	all, err := Plugins(cfg, logger)
	if err != nil {
		return err
	}
	plugins, err := core.NewRegistry(all...)
	if err != nil {
		return err
	}
	access := core.NewAccess()
	access.Admin(console.Name, console.User)
	var pluginList []core.Plugin
	for _, id := range plugins.IDs() {
		p, _ := plugins.Get(id)
		pluginList = append(pluginList, p)
	}
	convs := core.NewConversations()
	if cfg.StateFile != "" && cfg.StateFile != "off" {
		saved := state.Load(cfg.StateFile, logger)
		convs.Load(withinRoots(saved.Conversations, allowed, logger))
		convs.LoadOwners(saved.Owners)
		convs.LoadSpends(saved.Spend)
		convs.LoadSchedules(saved.Schedules)
		mirror := state.NewMirror(cfg.StateFile, convs, stateInterval, nil, logger)
		defer func() {
			if err := mirror.Close(); err != nil {
				logger.Error("state not saved", "err", err)
			}
		}()
	}
	platforms, err := buildPlatforms(cfg, platformDeps{plugins: pluginList, access: access, roots: allowed,
		defaultWorkdir: defaultWorkdir, convs: convs, logger: logger, signIn: stdio.Err})
	if err != nil {
		return err
	}
	if len(platforms) == 0 {
		typed := stdio.Typed
		switch cfg.ConsoleInput {
		case "typed":
			typed = true
		case "script":
			typed = false
		}
		platforms = []core.Platform{console.New(stdio.In, stdio.Out, stdio.TTY, typed)}
		if cfg.LogLevel == "" {
			// The console shares the terminal with its logs: only what
			// the person must see interleaves with the conversation.
			levelVar.Set(slog.LevelWarn)
		}
	}
	for _, p := range platforms {
		access.Report(logger, p.Name(), allowVar(p.Name()))
	}

	var observers core.Observers
	if cfg.AuditLog != "" {
		a, err := audit.Open(cfg.AuditLog, cfg.AuditLogText, core.NewRedactor(cfg.Secrets))
		if err != nil {
			return err
		}
		defer func() {
			if err := a.Close(); err != nil {
				logger.Error("audit log", "err", err)
			}
		}()
		observers = append(observers, a)
	}
	// The metrics observe the router, which needs them as its observer:
	// stats is filled in once the router exists, before anything serves.
	var stats func() core.Stats
	var m *metrics.Metrics
	if cfg.HealthAddr != "" {
		m = metrics.New(func() core.Stats { return stats() }, cliproc.Running)
		observers = append(observers, m)
	}

	// Platforms and turns run under a context that the signal does not
	// cancel: shutdown stops them in order, after running turns had their
	// grace and their chats were told.
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	router := core.NewRouter(runCtx, core.RouterConfig{
		Plugins:            plugins,
		Access:             access,
		Roots:              allowed,
		DefaultWorkdir:     defaultWorkdir,
		TurnTimeout:        cfg.TurnTimeout,
		IdleTimeout:        cfg.TurnIdleTimeout,
		QueueLimit:         cfg.QueueLimit,
		MaxRunningTurns:    cfg.MaxRunningTurns,
		MaxUserTurns:       cfg.MaxUserTurns,
		Ask:                cfg.Approvals != "auto",
		WarmTTL:            cfg.WarmTTL,
		WarmMax:            cfg.WarmMax,
		ApprovalTimeout:    cfg.ApprovalTimeout,
		AllowBypassModes:   cfg.AllowBypassModes,
		Worktrees:          cfg.Worktrees == "always",
		WorktreeDir:        worktreeDir,
		NotifyAfter:        notifyAfter(cfg.NotifyAfter),
		Budgets:            core.Budgets{TurnUSD: cfg.BudgetTurnUSD, UserDailyUSD: cfg.BudgetUserDailyUSD, Admins: cfg.BudgetAdmins},
		AttachmentMaxBytes: cfg.AttachmentMaxBytes,
		Transcribe:         transcriber(cfg.TranscribeCmd, cfg.ChildEnv),
		LongReplyPages:     cfg.LongReplyPages,
		Document:           formatter.MarkdownText,
		UserRate:           userRate,
		MaxMessageBytes:    cfg.MaxMessageBytes,
		Observer:           observers,
		Redactor:           core.NewRedactor(cfg.Secrets),
		Logger:             logger,
	}, convs)
	if m != nil {
		stats = router.Stats
		h, err := startHealth(cfg.HealthAddr, platforms, m.Handler(), logger)
		if err != nil {
			return err
		}
		defer h.close()
	}
	logger.Info("jakebot started", "platforms", len(platforms), "plugins", plugins.IDs(), "roots", []string(allowed),
		"conversations", convs.Len(), "user_rate", userRate.String())

	var wg sync.WaitGroup
	errs := make(chan error, len(platforms))
	for _, p := range platforms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Run(runCtx, router.Attach(p)); err != nil {
				errs <- fmt.Errorf("%s: %w", p.Name(), err)
			}
		}()
	}
	platformsDone := make(chan struct{})
	go func() {
		wg.Wait()
		close(platformsDone)
	}()
	idle := make(chan struct{})

	select {
	case <-platformsDone:
		// Every platform's input ended (the console at EOF): let the
		// running and queued turns finish, unless a signal comes first.
		go func() {
			router.Wait()
			close(idle)
		}()
		select {
		case <-idle:
		case <-ctx.Done():
			drain(router, cfg, logger)
		}
	case <-ctx.Done():
		drain(router, cfg, logger)
		stopRun()
		<-platformsDone
	}
	// No warm CLI outlives the bot.
	router.Shutdown()
	close(errs)
	for err := range errs {
		return err
	}
	logger.Info("jakebot stopped")
	return nil
}

func drain(router *core.Router, cfg Config, logger *slog.Logger) {
	grace := cfg.ShutdownGrace
	if grace <= 0 {
		grace = defaultGrace
	}
	st := router.Stats()
	logger.Info("shutting down: no new turns", "running_turns", st.Running, "queued", st.Queued, "grace", grace)
	router.Drain(grace)
}

const defaultGrace = 30 * time.Second

// withinRoots drops the saved conversations whose workdir now resolves
// outside the allowed roots (ALLOWED_ROOTS narrowed, a symlink swapped in):
// a restart must not keep a conversation outside the policy. A workdir
// that is missing for now stays: each turn checks it again.
func withinRoots(entries []core.Entry, roots core.Roots, logger *slog.Logger) []core.Entry {
	kept := entries[:0:0]
	for _, e := range entries {
		if real, err := filepath.EvalSymlinks(e.Workdir); err == nil && !roots.Contains(real) {
			logger.Warn("conversation dropped: its workdir is outside the allowed roots", "conversation", e.Key.String(), "workdir", e.Workdir, "resolved", real)
			continue
		}
		kept = append(kept, e)
	}
	return kept
}

// allowVar names the variable that lists a platform's allowed users, for
// start-up messages.
func allowVar(platform string) string {
	if platform == console.Name {
		return "(the console's local user is always allowed)"
	}
	return strings.ToUpper(platform) + "_ALLOWED_USERS"
}

// notifyAfter maps NOTIFY_AFTER=0 (never) to the router's "never".
func notifyAfter(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

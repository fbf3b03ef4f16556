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
	"sync"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/console"
)

// Stdio is the console's input and output, and where logs go.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// TTY says whether In and Out are a terminal.
	TTY bool
}

// Run runs the bot until ctx is cancelled or, for the console, its input
// ends and every turn has finished.
func Run(ctx context.Context, cfg Config, stdio Stdio) error {
	level, err := parseLevel(cfg.LogLevel)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stdio.Err, &slog.HandlerOptions{Level: level}))

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
	defaultWorkdir := ""
	if cfg.DefaultWorkdir != "" {
		if defaultWorkdir, err = allowed.Resolve(cfg.DefaultWorkdir, ""); err != nil {
			return fmt.Errorf("DEFAULT_WORKDIR: %s", core.UserMessage(err))
		}
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

	router := core.NewRouter(ctx, core.RouterConfig{
		Plugins:        plugins,
		Access:         access,
		Roots:          allowed,
		DefaultWorkdir: defaultWorkdir,
		TurnTimeout:    cfg.TurnTimeout,
		QueueLimit:     cfg.QueueLimit,
		Logger:         logger,
	}, core.NewConversations())

	var pluginList []core.Plugin
	for _, id := range plugins.IDs() {
		p, _ := plugins.Get(id)
		pluginList = append(pluginList, p)
	}
	platforms, err := buildPlatforms(cfg, pluginList, access, logger)
	if err != nil {
		return err
	}
	if len(platforms) == 0 {
		platforms = []core.Platform{console.New(stdio.In, stdio.Out, stdio.TTY)}
	}
	logger.Info("jakebot started", "platforms", len(platforms), "plugins", plugins.IDs(), "roots", []string(allowed))

	var wg sync.WaitGroup
	errs := make(chan error, len(platforms))
	for _, p := range platforms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Run(ctx, router.Attach(p)); err != nil {
				errs <- fmt.Errorf("%s: %w", p.Name(), err)
			}
		}()
	}
	// Every platform has stopped: its input ended or ctx was cancelled.
	wg.Wait()
	if ctx.Err() != nil {
		router.Shutdown()
	}
	router.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	logger.Info("jakebot stopped")
	return nil
}

package bot

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jake-bot/jake-bot/bot/agenttools"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/workspace"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// RunRunner runs `jakebot runner`: this machine's CLIs serve the turns a
// gateway sends over NATS_URL, in this machine's ALLOWED_ROOTS, until ctx
// is cancelled.
func RunRunner(ctx context.Context, cfg Config, stdio Stdio) error {
	level, err := parseLevel(cfg.LogLevel)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(newRedactor(stdio.Err, cfg.Secrets), &slog.HandlerOptions{Level: level}))
	if !cfg.NATS.Enabled() {
		return fmt.Errorf("jakebot runner needs NATS_URL: the NATS server the bot uses")
	}
	name, err := cfg.NATS.Name()
	if err != nil {
		return err
	}
	pol, err := readPolicy(cfg)
	if err != nil {
		return err
	}
	if cfg.Sandbox, err = cfg.ChooseSandbox(ctx); err != nil {
		return err
	}
	logSandbox(cfg.Sandbox, logger)
	all, err := Plugins(cfg, logger)
	if err != nil {
		return err
	}
	plugins, err := core.NewRegistry(all...)
	if err != nil {
		return err
	}
	tools, err := startAgentTools(cfg, logger)
	if err != nil {
		return err
	}
	if tools != nil {
		defer tools.Close()
	}
	nc, err := remote.Connect(cfg.NATS, "jakebot runner "+name, logger, remote.RunnerInbox(name))
	if err != nil {
		return err
	}
	defer nc.Close()
	r, err := remote.NewRunner(nc, remote.RunnerConfig{Name: name, Plugins: plugins,
		Workspace:        workspace.Machine{Roots: pol.roots, DefaultWorkdir: pol.defaultWorkdir, WorktreeDir: pol.worktreeDir},
		AllowBypassModes: cfg.AllowBypassModes, Redactor: core.NewRedactor(cfg.Secrets),
		AttachmentMaxBytes: cfg.AttachmentMaxBytes, AgentTools: agentTools(tools), Logger: logger})
	if err != nil {
		return err
	}
	if cfg.HealthAddr != "" {
		// /healthz says the runner is up (a container's HEALTHCHECK);
		// its metrics are the gateway's.
		h, err := startHealth(cfg.HealthAddr, healthz(nil), http.NotFoundHandler(), logger)
		if err != nil {
			return err
		}
		defer h.close()
	}
	percent, from := SetGCPercent()
	limit, limitFrom := SetMemoryLimit()
	logger.Info("collector target", "gc_percent", percent, "gc_percent_from", from,
		"memory_limit_mib", limit>>20, "memory_limit_from", limitFrom)
	return r.Run(ctx)
}

// startAgentTools starts the agents' MCP server, unless AGENT_TOOLS=off.
// On a runner it serves the runner's CLIs, and their calls go to the
// gateway, which answers those of its own AGENT_TOOLS.
func startAgentTools(cfg Config, logger *slog.Logger) (*agenttools.Server, error) {
	tools, err := cfg.agentTools()
	if err != nil || tools == nil {
		return nil, err
	}
	return agenttools.Start(tools, logger)
}

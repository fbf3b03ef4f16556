package bot

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/configured"
	"github.com/jake-bot/jake-bot/plugins/gemini"
)

// builtins returns the plugins jake-bot always has.
func builtins(cfg Config, logger *slog.Logger) []core.Plugin {
	cfg.Claude.Environ, cfg.Codex.Environ, cfg.Gemini.Environ = cfg.ChildEnv, cfg.ChildEnv, cfg.ChildEnv
	// Codex's own Config.Sandbox is its CLI's sandbox level (CODEX_SANDBOX).
	cfg.Claude.Settings.Sandbox, cfg.Codex.Settings.Sandbox, cfg.Gemini.Settings.Sandbox = cfg.Sandbox, cfg.Sandbox, cfg.Sandbox
	return []core.Plugin{
		claude.New(cfg.Claude, logger.With("plugin", "claude")),
		codex.New(cfg.Codex, logger.With("plugin", "codex")),
		gemini.New(cfg.Gemini, logger.With("plugin", "gemini")),
	}
}

// Plugins returns the built-in plugins followed by those configured in
// PLUGINS_FILE. A mistake in the file is an error naming its file and
// line; so is a configured CLI that is not installed.
func Plugins(cfg Config, logger *slog.Logger) ([]core.Plugin, error) {
	logger = core.OrDiscard(logger)
	out := builtins(cfg, logger)
	specs, err := cfg.PluginSpecs(false)
	if err != nil {
		return nil, err
	}
	for i := range specs {
		specs[i].Environ, specs[i].Sandbox = cfg.ChildEnv, cfg.Sandbox
	}
	return append(out, configured.Plugins(specs, logger)...), nil
}

// PluginSpecs loads PLUGINS_FILE, refusing ids that a built-in plugin or a
// command has. skipLookPath leaves the binaries unchecked (jakebot doctor
// reports them itself). No file configures nothing.
func (cfg Config) PluginSpecs(skipLookPath bool) ([]configured.Spec, error) {
	if cfg.PluginsFile == "" {
		return nil, nil
	}
	var ids []string
	for _, p := range builtins(cfg, core.OrDiscard(nil)) {
		ids = append(ids, p.ID())
	}
	taken := func(id string) string {
		switch {
		case slices.Contains(ids, id):
			return "a built-in plugin has it"
		case core.IsReserved(id):
			return "it is the /" + id + " command"
		}
		return ""
	}
	specs, err := configured.Load(cfg.PluginsFile, configured.Options{Taken: taken, SkipLookPath: skipLookPath})
	if err != nil {
		return nil, fmt.Errorf("PLUGINS_FILE: %w", err)
	}
	return specs, nil
}

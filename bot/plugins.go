package bot

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/configured"
)

// builtins returns the plugins jake-bot always has (BuiltinPlugins), their
// CLIs' environment cfg.ChildEnv.
func builtins(cfg Config, logger *slog.Logger) []core.Plugin {
	for _, s := range cfg.cliSettings() {
		s.Environ = cfg.ChildEnv
		// A CLI plugin's own Sandbox (Codex's CODEX_SANDBOX) is its CLI's
		// sandbox level; the Settings' is the bot's wall around it.
		s.Sandbox = cfg.Sandbox
	}
	var out []core.Plugin
	for _, b := range BuiltinPlugins {
		out = append(out, b.New(cfg, logger.With("plugin", b.ID)))
	}
	return out
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
	taken := func(id string) string {
		switch {
		case slices.ContainsFunc(BuiltinPlugins, func(b BuiltinPlugin) bool { return b.ID == id }):
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

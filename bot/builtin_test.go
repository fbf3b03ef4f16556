package bot

import (
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Every CLI plugin's part of Config is a row of BuiltinPlugins, and the
// plugins made from the table run their CLIs with the bot's ChildEnv:
// the environment is set through the rows' configs found by their
// cliproc.Settings, so a field without a row, or a row without a field,
// would go unnoticed but here.
func TestBuiltinPluginsAreConfigsCLIs(t *testing.T) {
	t.Parallel()
	cfg := Config{ChildEnv: []string{"HOME=/home/u", "PATH=/bin"}}
	if got, want := len(cfg.cliSettings()), len(BuiltinPlugins); got != want {
		t.Fatalf("Config has %d CLI plugin configs, BuiltinPlugins %d rows", got, want)
	}
	for _, p := range builtins(cfg, core.OrDiscard(nil)) {
		c, ok := p.(interface{ CLI() cliproc.CLI })
		if !ok {
			t.Errorf("%s has no CLI", p.ID())
			continue
		}
		if got := c.CLI().Environ; !slices.Equal(got, cfg.ChildEnv) {
			t.Errorf("%s's CLI environment = %q, want ChildEnv %q", p.ID(), got, cfg.ChildEnv)
		}
	}
	if len(cfg.Claude.Environ) != 0 {
		t.Errorf("builtins changed its caller's Config: Claude.Environ = %q", cfg.Claude.Environ)
	}
}

// Every platform's variables start with its row's prefix, so that a
// secret-looking one it does not read is still withheld from the CLIs.
func TestBuiltinPlatformsPrefixTheirVariables(t *testing.T) {
	t.Parallel()
	for _, p := range BuiltinPlatforms {
		if !Withheld(p.EnvPrefix + "SOME_SECRET") {
			t.Errorf("%sSOME_SECRET is not withheld", p.EnvPrefix)
		}
	}
	if Withheld("ANTHROPIC_API_KEY") {
		t.Error("ANTHROPIC_API_KEY, a CLI's own credential, is withheld")
	}
}

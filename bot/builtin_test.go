package bot

import (
	"io"
	"log/slog"
	"slices"
	"strings"
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

// An adapter's Options take the deps they name, of the deps' type, and
// keep their defaults for the rest; a field named as a dep but of another
// type is refused as the table is built.
func TestAdapterOptionsTakeTheDepsTheyName(t *testing.T) {
	t.Parallel()
	type options struct {
		Plugins []core.Plugin
		Logger  *slog.Logger
		Clock   core.Clock
	}
	logger := slog.New(slog.DiscardHandler)
	d := platformDeps{Plugins: []core.Plugin{nil}, Logger: logger, Lookup: core.NoLookup{}}
	got := adapterOptions[options](d)
	if len(got.Plugins) != 1 || got.Logger != logger || got.Clock != nil {
		t.Errorf("adapterOptions = %+v, want the deps' Plugins and Logger, no Clock", got)
	}
	if err := checkOptions[options](); err != nil {
		t.Errorf("checkOptions(%T) = %v, want nil", options{}, err)
	}
	type wrong struct{ Logger io.Writer }
	if err := checkOptions[wrong](); err == nil || !strings.Contains(err.Error(), "Logger") {
		t.Errorf("checkOptions(%T) = %v, want an error naming Logger", wrong{}, err)
	}
}

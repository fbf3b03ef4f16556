package bot

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord"
	"github.com/jake-bot/jake-bot/platforms/matrix"
	"github.com/jake-bot/jake-bot/platforms/mattermost"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/gemini"
)

// The built-in plugins and platforms, one row each: the bot runs them,
// jakebot doctor checks them and jakebot replay replays and renders with
// them from these tables. A new CLI plugin or chat platform is its package,
// its field in Config and its row here.

// BuiltinPlugin is a plugin jake-bot always has, over a CLI of its own.
type BuiltinPlugin struct {
	ID string
	// New makes the plugin from its part of cfg (whose CLI environment
	// newPlugins sets). A nil logger discards.
	New func(cfg Config, logger *slog.Logger) core.Plugin
	// ReadStream reads the CLI's recorded output into the events the
	// plugin emits (jakebot replay).
	ReadStream func(r io.Reader, workdir string, emit func(core.Event)) (*core.TurnResult, error)
}

// BuiltinPlugins are the built-in plugins, in the order /help lists them.
var BuiltinPlugins = []BuiltinPlugin{
	{ID: "claude", ReadStream: claude.ReadStream,
		New: func(cfg Config, l *slog.Logger) core.Plugin { return claude.New(cfg.Claude, l) }},
	{ID: "codex", ReadStream: codex.ReadStream,
		New: func(cfg Config, l *slog.Logger) core.Plugin { return codex.New(cfg.Codex, l) }},
	{ID: "gemini", ReadStream: gemini.ReadStream,
		New: func(cfg Config, l *slog.Logger) core.Plugin { return gemini.New(cfg.Gemini, l) }},
}

// BuiltinPlatform is a chat platform jake-bot can serve.
type BuiltinPlatform struct {
	Name string
	// EnvPrefix begins the names of its variables: a secret-looking one
	// is withheld from the CLIs even where jakebot does not read it.
	EnvPrefix string
	// Config is its part of cfg.
	Config func(cfg Config) platformConfig
	// New makes the adapter from its part of cfg.
	New func(cfg Config, d platformDeps) (core.Platform, error)
	// Format is how it renders and paces a reply with the default
	// configuration, without connecting (jakebot replay).
	Format func() core.Format
}

// BuiltinPlatforms are the chat platforms, in the order they start: each
// row says only what is the platform's own.
var BuiltinPlatforms = []BuiltinPlatform{
	builtinPlatform(discord.Name, "DISCORD_", func(c Config) discord.Config { return c.Discord }, discord.New, discord.NewFormat),
	builtinPlatform(slack.Name, "SLACK_", func(c Config) slack.Config { return c.Slack }, slack.New, slack.NewFormat),
	builtinPlatform(telegram.Name, "TELEGRAM_", func(c Config) telegram.Config { return c.Telegram }, telegram.New, telegram.NewFormat),
	builtinPlatform(mattermost.Name, "MATTERMOST_", func(c Config) mattermost.Config { return c.Mattermost }, mattermost.New, mattermost.NewFormat),
	builtinPlatform(matrix.Name, "MATRIX_", func(c Config) matrix.Config { return c.Matrix }, matrix.New, matrix.NewFormat),
	builtinPlatform(web.Name, "WEB_", func(c Config) web.Config { return c.Web }, web.New, web.NewFormat),
}

// builtinPlatform is the row of the platform name whose variables begin
// with envPrefix and whose part of the configuration is config's: New
// makes it with newAdapter from that part and its Options (O) as
// adapterOptions fills them, and Format with newFormat from the zero
// part. It panics when O takes a dependency of another type than
// platformDeps', so that the table fails as it is built.
func builtinPlatform[C platformConfig, O any, A core.Platform](name, envPrefix string, config func(Config) C,
	newAdapter func(C, O) (A, error), newFormat func(C) core.Format) BuiltinPlatform {
	if err := checkOptions[O](); err != nil {
		panic(err)
	}
	return BuiltinPlatform{Name: name, EnvPrefix: envPrefix,
		Config: func(cfg Config) platformConfig { return config(cfg) },
		New: func(cfg Config, d platformDeps) (core.Platform, error) {
			a, err := newAdapter(config(cfg), adapterOptions[O](d))
			if err != nil {
				// Not a as a core.Platform: a nil *Adapter in one is not nil.
				return nil, err
			}
			return a, nil
		},
		Format: func() core.Format {
			var zero C
			return newFormat(zero)
		}}
}

// adapterOptions returns an adapter's Options, O, with each of its fields
// named as an exported field of d set to it: the adapter takes of the bot
// what its Options ask for; the rest stay zero, their defaults.
func adapterOptions[O any](d platformDeps) O {
	var o O
	ov, dv := reflect.ValueOf(&o).Elem(), reflect.ValueOf(d)
	for _, f := range reflect.VisibleFields(dv.Type()) {
		if of := ov.FieldByName(f.Name); f.IsExported() && of.IsValid() {
			of.Set(dv.FieldByIndex(f.Index))
		}
	}
	return o
}

// checkOptions says which field of O, an adapter's Options, is named as
// one of platformDeps' but cannot take it.
func checkOptions[O any]() error {
	ot := reflect.TypeFor[O]()
	for _, f := range reflect.VisibleFields(reflect.TypeFor[platformDeps]()) {
		if of, ok := ot.FieldByName(f.Name); ok && f.IsExported() && !f.Type.AssignableTo(of.Type) {
			return fmt.Errorf("bot: %v.%s is %v, which platformDeps.%s (%v) is not", ot, f.Name, of.Type, f.Name, f.Type)
		}
	}
	return nil
}

// cliSettings returns the cliproc.Settings of the CLI plugins' parts of
// cfg: the fields whose type embeds them.
func (cfg *Config) cliSettings() []*cliproc.Settings {
	var out []*cliproc.Settings
	v := reflect.ValueOf(cfg).Elem()
	for i := range v.NumField() {
		if index := cliSettingsIndex(v.Type().Field(i).Type); index != nil {
			out = append(out, v.Field(i).FieldByIndex(index).Addr().Interface().(*cliproc.Settings))
		}
	}
	return out
}

// cliSettingsIndex is the index of the cliproc.Settings that t, a CLI
// plugin's config, embeds; nil for any other type.
func cliSettingsIndex(t reflect.Type) []int {
	if t.Kind() != reflect.Struct {
		return nil
	}
	f, ok := t.FieldByName("Settings")
	if !ok || !f.Anonymous || f.Type != reflect.TypeOf(cliproc.Settings{}) {
		return nil
	}
	return f.Index
}

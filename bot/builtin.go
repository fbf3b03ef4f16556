package bot

import (
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

// BuiltinPlatforms are the chat platforms, in the order they start.
var BuiltinPlatforms = []BuiltinPlatform{
	{Name: discord.Name, EnvPrefix: "DISCORD_",
		Config: func(cfg Config) platformConfig { return cfg.Discord },
		New: func(cfg Config, d platformDeps) (core.Platform, error) {
			return discord.New(cfg.Discord, discord.Options{Plugins: d.plugins, Lookup: d.lookup, Logger: d.logger})
		},
		Format: func() core.Format { return discord.NewFormat(discord.Config{}) }},
	{Name: slack.Name, EnvPrefix: "SLACK_",
		Config: func(cfg Config) platformConfig { return cfg.Slack },
		New: func(cfg Config, d platformDeps) (core.Platform, error) {
			return slack.New(cfg.Slack, slack.Options{Plugins: d.plugins, Lookup: d.lookup, Logger: d.logger})
		},
		Format: func() core.Format { return slack.NewFormat(slack.Config{}) }},
	{Name: telegram.Name, EnvPrefix: "TELEGRAM_",
		Config: func(cfg Config) platformConfig { return cfg.Telegram },
		New: func(cfg Config, d platformDeps) (core.Platform, error) {
			return telegram.New(cfg.Telegram, telegram.Options{Plugins: d.plugins, Logger: d.logger})
		},
		Format: func() core.Format { return telegram.NewFormat(telegram.Config{}) }},
	{Name: mattermost.Name, EnvPrefix: "MATTERMOST_",
		Config: func(cfg Config) platformConfig { return cfg.Mattermost },
		New: func(cfg Config, d platformDeps) (core.Platform, error) {
			return mattermost.New(cfg.Mattermost, mattermost.Options{Plugins: d.plugins, Lookup: d.lookup, Logger: d.logger})
		},
		Format: func() core.Format { return mattermost.NewFormat(mattermost.Config{}) }},
	{Name: matrix.Name, EnvPrefix: "MATRIX_",
		Config: func(cfg Config) platformConfig { return cfg.Matrix },
		New: func(cfg Config, d platformDeps) (core.Platform, error) {
			return matrix.New(cfg.Matrix, matrix.Options{Plugins: d.plugins, Lookup: d.lookup, Logger: d.logger})
		},
		Format: func() core.Format { return matrix.NewFormat(matrix.Config{}) }},
	{Name: web.Name, EnvPrefix: "WEB_",
		Config: func(cfg Config) platformConfig { return cfg.Web },
		New: func(cfg Config, d platformDeps) (core.Platform, error) {
			return web.New(cfg.Web, web.Options{Logger: d.logger, SignIn: d.signIn, Lookup: d.lookup, Plugins: d.plugins, SignIns: d.signIns})
		},
		Format: func() core.Format { return web.NewFormat(web.Config{}) }},
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

package bot

import (
	"io"
	"log/slog"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/platforms/web"
)

// platformDeps is what the adapters are built from besides their config.
type platformDeps struct {
	plugins []core.Plugin
	access  *core.Access
	// lookup answers the adapters' questions with the router's policy.
	lookup core.Lookup
	logger *slog.Logger
	// signIn is where the web platform prints its sign-in URL: stderr,
	// never the log.
	signIn io.Writer
}

// buildPlatforms returns the chat platforms whose tokens are configured,
// each with its users granted in access. None configured means the
// console.
func buildPlatforms(cfg Config, d platformDeps) ([]core.Platform, error) {
	plugins, access, logger := d.plugins, d.access, d.logger
	var ps []core.Platform
	if cfg.Discord.Enabled() {
		if err := cfg.Discord.Validate(); err != nil {
			return nil, err
		}
		cfg.Discord.Grant(access)
		a, err := discord.New(cfg.Discord, discord.Options{Plugins: plugins, Lookup: d.lookup, Logger: logger})
		if err != nil {
			return nil, err
		}
		ps = append(ps, a)
	}
	if cfg.Slack.Enabled() {
		if err := cfg.Slack.Validate(); err != nil {
			return nil, err
		}
		cfg.Slack.Grant(access)
		a, err := slack.New(cfg.Slack, slack.WithLogger(logger), slack.WithPlugins(plugins...), slack.WithLookup(d.lookup))
		if err != nil {
			return nil, err
		}
		ps = append(ps, a)
	}
	if cfg.Telegram.Enabled() {
		if err := cfg.Telegram.Validate(); err != nil {
			return nil, err
		}
		cfg.Telegram.Grant(access)
		a, err := telegram.New(cfg.Telegram, telegram.Options{Plugins: plugins, Logger: logger})
		if err != nil {
			return nil, err
		}
		ps = append(ps, a)
	}
	if cfg.Web.Enabled() {
		a, err := web.New(cfg.Web, web.Options{Logger: logger, SignIn: d.signIn, Lookup: d.lookup, Plugins: plugins})
		if err != nil {
			return nil, err
		}
		cfg.Web.Grant(access)
		ps = append(ps, a)
	}
	return ps, nil
}

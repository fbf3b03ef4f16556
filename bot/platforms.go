package bot

import (
	"io"
	"log/slog"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord"
	"github.com/jake-bot/jake-bot/platforms/matrix"
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
	// signIn is where the web platform prints its sign-in URL: stderr
	// when it is a terminal, never the log; nil when it is not.
	signIn io.Writer
}

// platformConfig is what every chat platform's configuration can do.
type platformConfig interface {
	Enabled() bool
	Validate() error
	Grant(*core.Access)
}

// buildPlatforms returns the chat platforms whose tokens are configured,
// each with its users granted in access. None configured means the
// console.
func buildPlatforms(cfg Config, d platformDeps) ([]core.Platform, error) {
	plugins, logger := d.plugins, d.logger
	builders := []struct {
		cfg   platformConfig
		build func() (core.Platform, error)
	}{
		{cfg.Discord, func() (core.Platform, error) {
			return discord.New(cfg.Discord, discord.Options{Plugins: plugins, Lookup: d.lookup, Logger: logger})
		}},
		{cfg.Slack, func() (core.Platform, error) {
			return slack.New(cfg.Slack, slack.Options{Plugins: plugins, Lookup: d.lookup, Logger: logger})
		}},
		{cfg.Telegram, func() (core.Platform, error) {
			return telegram.New(cfg.Telegram, telegram.Options{Plugins: plugins, Logger: logger})
		}},
		{cfg.Matrix, func() (core.Platform, error) {
			return matrix.New(cfg.Matrix, matrix.Options{Plugins: plugins, Lookup: d.lookup, Logger: logger})
		}},
		{cfg.Web, func() (core.Platform, error) {
			return web.New(cfg.Web, web.Options{Logger: logger, SignIn: d.signIn, Lookup: d.lookup, Plugins: plugins})
		}},
	}
	var ps []core.Platform
	for _, b := range builders {
		if !b.cfg.Enabled() {
			continue
		}
		if err := b.cfg.Validate(); err != nil {
			return nil, err
		}
		b.cfg.Grant(d.access)
		p, err := b.build()
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

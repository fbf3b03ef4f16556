package bot

import (
	"log/slog"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/telegram"
)

// buildPlatforms returns the chat platforms whose tokens are configured,
// each with its users granted in access. None configured means the
// console.
func buildPlatforms(cfg Config, plugins []core.Plugin, access *core.Access, logger *slog.Logger) ([]core.Platform, error) {
	var ps []core.Platform
	if cfg.Slack.Enabled() {
		if err := cfg.Slack.Validate(); err != nil {
			return nil, err
		}
		cfg.Slack.Grant(access)
		a, err := slack.New(cfg.Slack, slack.WithLogger(logger.With("platform", slack.Name)))
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
		a, err := telegram.New(cfg.Telegram, telegram.Options{Plugins: plugins, Logger: logger.With("platform", "telegram")})
		if err != nil {
			return nil, err
		}
		ps = append(ps, a)
	}
	return ps, nil
}

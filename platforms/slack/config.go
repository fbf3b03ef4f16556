package slack

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// Config is the Slack adapter's configuration, read from the environment
// with github.com/caarlos0/env/v11; the bot's own config embeds it.
type Config struct {
	// AppToken (xapp-…) opens Socket Mode connections.
	AppToken Secret `env:"SLACK_APP_TOKEN"`
	// BotToken (xoxb-…) calls the Web API.
	BotToken Secret `env:"SLACK_BOT_TOKEN"`
	// AllowedUsers are the Slack user ids (U…) served; "*" serves everyone.
	AllowedUsers []string `env:"SLACK_ALLOWED_USERS"`
	// AdminUsers are allowed users who may also use /status all and set
	// workdirs anywhere under the roots.
	AdminUsers []string `env:"SLACK_ADMIN_USERS"`
	// EditInterval is the least time between two edits of one message.
	EditInterval time.Duration `env:"SLACK_EDIT_INTERVAL" envDefault:"1s"`
	// APIURL points the Web API (and so Socket Mode's apps.connections.open)
	// at a compatible server.
	APIURL string `env:"SLACK_API_URL" envDefault:"https://slack.com/api/"`
	// DefaultPlugin is the plugin "@bot start" and a plain mention start.
	DefaultPlugin string `env:"SLACK_DEFAULT_PLUGIN" envDefault:"claude"`
}

// Enabled reports whether Slack is configured at all: both tokens set.
func (c Config) Enabled() bool { return c.AppToken != "" && c.BotToken != "" }

// Validate reports a missing or misplaced token. It never echoes a token.
func (c Config) Validate() error {
	switch {
	case c.AppToken == "" || c.BotToken == "":
		return fmt.Errorf("slack: SLACK_APP_TOKEN and SLACK_BOT_TOKEN must both be set")
	case !strings.HasPrefix(string(c.AppToken), "xapp-"):
		return fmt.Errorf("slack: SLACK_APP_TOKEN must be an app-level token (xapp-…) with the connections:write scope")
	case !strings.HasPrefix(string(c.BotToken), "xoxb-"):
		return fmt.Errorf("slack: SLACK_BOT_TOKEN must be a bot token (xoxb-…)")
	case c.EditInterval < 0:
		return fmt.Errorf("slack: SLACK_EDIT_INTERVAL must not be negative")
	}
	return nil
}

// Grant adds the configured users to access under the platform's name.
func (c Config) Grant(access *core.Access) {
	access.Allow(Name, c.AllowedUsers...)
	access.Admin(Name, c.AdminUsers...)
}

// LogValue logs the configuration without its tokens.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("app_token_set", c.AppToken != ""),
		slog.Bool("bot_token_set", c.BotToken != ""),
		slog.Int("allowed_users", len(c.AllowedUsers)),
		slog.Int("admin_users", len(c.AdminUsers)),
		slog.Duration("edit_interval", c.EditInterval),
		slog.String("api_url", c.APIURL),
		slog.String("default_plugin", c.DefaultPlugin),
	)
}

// String keeps tokens out of %v.
func (c Config) String() string { return c.LogValue().String() }

// Secret is a string that never prints (core.Secret).
type Secret = core.Secret

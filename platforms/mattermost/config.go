package mattermost

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// Config is the Mattermost adapter's configuration, read from the
// environment with github.com/caarlos0/env/v11; the bot's own config
// embeds it.
type Config struct {
	// URL is the server's address, such as https://chat.example.com.
	URL string `env:"MATTERMOST_URL"`
	// Token is the bot account's access token. The adapter is enabled
	// when it is set.
	Token Secret `env:"MATTERMOST_TOKEN"`
	// AllowedUsers are the user ids (26 characters) served; "*" serves
	// everyone who can write to the bot.
	AllowedUsers []string `env:"MATTERMOST_ALLOWED_USERS"`
	// AdminUsers are allowed users who may also use /status all and set
	// workdirs anywhere under the roots.
	AdminUsers []string `env:"MATTERMOST_ADMIN_USERS"`
	// ActionsURL, when set, is where the Mattermost server reaches the
	// bot to deliver button presses: questions then carry buttons. Its
	// path is the path the bot serves. A port of 0 stands for the port
	// the bot got when it listens on port 0 (tests).
	ActionsURL string `env:"MATTERMOST_ACTIONS_URL"`
	// ActionsListen is the address the callback endpoint listens on;
	// empty is every interface at ActionsURL's port.
	ActionsListen string `env:"MATTERMOST_ACTIONS_LISTEN"`
	// EditInterval is the least time between two edits of one post.
	EditInterval time.Duration `env:"MATTERMOST_EDIT_INTERVAL" envDefault:"1s"`
}

// Enabled reports whether a token is configured.
func (c Config) Enabled() bool { return c.Token != "" }

// Validate reports a configuration the adapter cannot run with. It never
// echoes the token.
func (c Config) Validate() error {
	if c.Token == "" {
		return fmt.Errorf("mattermost: MATTERMOST_TOKEN is not set")
	}
	if _, err := serverURL(c.URL); err != nil {
		return err
	}
	if c.EditInterval < 0 {
		return fmt.Errorf("mattermost: MATTERMOST_EDIT_INTERVAL must not be negative")
	}
	if c.ActionsURL != "" {
		if _, err := c.actionsListen(); err != nil {
			return err
		}
	}
	return nil
}

// serverURL checks MATTERMOST_URL and returns it without a trailing slash.
func serverURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("mattermost: MATTERMOST_URL must be the server's http(s) address, such as https://chat.example.com")
	}
	return strings.TrimRight(raw, "/"), nil
}

// actionsListen returns the address the callback endpoint listens on.
func (c Config) actionsListen() (string, error) {
	u, err := url.Parse(c.ActionsURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("mattermost: MATTERMOST_ACTIONS_URL must be an http(s) URL the Mattermost server can reach")
	}
	if c.ActionsListen != "" {
		return c.ActionsListen, nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort("", port), nil
}

// Grant adds the configured users to access under the platform's name.
func (c Config) Grant(access *core.Access) {
	access.Allow(Name, c.AllowedUsers...)
	access.Admin(Name, c.AdminUsers...)
}

// LogValue logs the configuration without its token.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", c.URL),
		slog.Bool("token_set", c.Token != ""),
		slog.Int("allowed_users", len(c.AllowedUsers)),
		slog.Int("admin_users", len(c.AdminUsers)),
		slog.String("actions_url", c.ActionsURL),
		slog.Duration("edit_interval", c.EditInterval),
	)
}

// String keeps the token out of %v.
func (c Config) String() string { return c.LogValue().String() }

// Secret is a string that never prints (core.Secret).
type Secret = core.Secret

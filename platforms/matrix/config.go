package matrix

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// Config is the Matrix adapter's configuration, read from the environment
// with github.com/caarlos0/env/v11; the bot's own config embeds it.
type Config struct {
	// Homeserver is the homeserver's client API address, such as
	// https://matrix.example.org.
	Homeserver string `env:"MATRIX_HOMESERVER"`
	// UserID is the bot's account, such as @jakebot:example.org.
	UserID string `env:"MATRIX_USER_ID"`
	// AccessToken is the bot account's access token. The adapter is
	// enabled when it is set.
	AccessToken Secret `env:"MATRIX_ACCESS_TOKEN"`
	// AllowedUsers are the Matrix ids (@name:server) served; "*" serves
	// everyone in a room the bot is in. The bot joins the rooms they
	// invite it to.
	AllowedUsers []string `env:"MATRIX_ALLOWED_USERS"`
	// AdminUsers are allowed users who may also use /status all and set
	// workdirs anywhere under the roots.
	AdminUsers []string `env:"MATRIX_ADMIN_USERS"`
	// EditInterval is the least time between two edits of one message.
	EditInterval time.Duration `env:"MATRIX_EDIT_INTERVAL" envDefault:"1s"`
	// RoomInterval and RoomBurst bound the bot's writes to one room:
	// every message, edit and reaction is an event in the room's history
	// that each member's client receives.
	RoomInterval time.Duration `env:"MATRIX_ROOM_INTERVAL" envDefault:"500ms"`
	RoomBurst    int           `env:"MATRIX_ROOM_BURST" envDefault:"5"`
}

// Enabled reports whether an access token is configured.
func (c Config) Enabled() bool { return c.AccessToken != "" }

// Validate reports a configuration the adapter cannot run with. It never
// echoes the token.
func (c Config) Validate() error {
	if c.AccessToken == "" {
		return fmt.Errorf("matrix: MATRIX_ACCESS_TOKEN is not set")
	}
	if _, err := homeserverURL(c.Homeserver); err != nil {
		return err
	}
	if !ValidUserID(c.UserID) {
		return fmt.Errorf("matrix: MATRIX_USER_ID must be the bot's Matrix id, such as @jakebot:example.org")
	}
	for _, u := range append(append([]string(nil), c.AllowedUsers...), c.AdminUsers...) {
		if u != "*" && !ValidUserID(u) {
			return fmt.Errorf("matrix: %q in MATRIX_ALLOWED_USERS or MATRIX_ADMIN_USERS is not a Matrix id (@name:server)", u)
		}
	}
	if c.EditInterval < 0 || c.RoomInterval < 0 || c.RoomBurst < 0 {
		return fmt.Errorf("matrix: MATRIX_EDIT_INTERVAL, MATRIX_ROOM_INTERVAL and MATRIX_ROOM_BURST must not be negative")
	}
	return nil
}

// homeserverURL checks MATRIX_HOMESERVER and returns it without a
// trailing slash.
func homeserverURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("matrix: MATRIX_HOMESERVER must be the homeserver's http(s) address, such as https://matrix.example.org")
	}
	return strings.TrimRight(raw, "/"), nil
}

// ValidUserID reports whether s has the form of a Matrix user id:
// @localpart:server.
func ValidUserID(s string) bool {
	local, server, ok := strings.Cut(strings.TrimPrefix(s, "@"), ":")
	return strings.HasPrefix(s, "@") && ok && local != "" && server != "" && !strings.ContainsAny(s, " /")
}

// Grant adds the configured users to access under the platform's name.
func (c Config) Grant(access *core.Access) {
	access.Allow(Name, c.AllowedUsers...)
	access.Admin(Name, c.AdminUsers...)
}

// LogValue logs the configuration without its token.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("homeserver", c.Homeserver),
		slog.String("user_id", c.UserID),
		slog.Bool("token_set", c.AccessToken != ""),
		slog.Int("allowed_users", len(c.AllowedUsers)),
		slog.Int("admin_users", len(c.AdminUsers)),
		slog.Duration("edit_interval", c.EditInterval),
	)
}

// String keeps the token out of %v.
func (c Config) String() string { return c.LogValue().String() }

// Secret is a string that never prints (core.Secret).
type Secret = core.Secret

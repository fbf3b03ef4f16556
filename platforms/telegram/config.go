package telegram

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/jake-bot/jake-bot/core"
)

// Config is the Telegram part of the bot's configuration, read from the
// environment with github.com/caarlos0/env/v11.
type Config struct {
	// Token is the bot token from @BotFather. The adapter is enabled when
	// it is set.
	Token Secret `env:"TELEGRAM_TOKEN"`
	// AllowedUsers are the numeric Telegram user ids the bot serves.
	AllowedUsers UserIDs `env:"TELEGRAM_ALLOWED_USERS"`
	// AdminUsers are allowed users who may also use /status all and set
	// workdirs outside the default root.
	AdminUsers UserIDs `env:"TELEGRAM_ADMIN_USERS"`
	// APIEndpoint is the Bot API URL in the client library's format, the
	// token and the method filling the two %s; self-hosters point it at a
	// local Bot API server.
	APIEndpoint string `env:"TELEGRAM_API_ENDPOINT" envDefault:"https://api.telegram.org/bot%s/%s"`
	// WebhookURL, when set, makes Telegram push updates to this public
	// HTTPS URL instead of the bot long-polling for them.
	WebhookURL string `env:"TELEGRAM_WEBHOOK_URL"`
	// WebhookListen is the address the webhook server listens on.
	WebhookListen string `env:"TELEGRAM_WEBHOOK_LISTEN" envDefault:":8443"`
	// WebhookSecret is checked in every webhook request's
	// X-Telegram-Bot-Api-Secret-Token header; empty means a random one
	// per start.
	WebhookSecret Secret `env:"TELEGRAM_WEBHOOK_SECRET"`
	// EditInterval is the least time between two writes to one chat (and
	// between two edits of one message).
	EditInterval time.Duration `env:"TELEGRAM_EDIT_INTERVAL" envDefault:"1s"`
	// GroupWritesPerMinute is the budget of messages and edits per group
	// chat per minute, below Telegram's limit of about 20.
	GroupWritesPerMinute int `env:"TELEGRAM_GROUP_WRITES_PER_MINUTE" envDefault:"20"`
	// PollTimeout is how long one getUpdates long poll may wait on the
	// server for an update.
	PollTimeout time.Duration `env:"TELEGRAM_POLL_TIMEOUT" envDefault:"30s"`
}

// Enabled reports whether a token is configured.
func (c Config) Enabled() bool { return c.Token != "" }

// Validate reports a configuration the adapter cannot run with.
func (c Config) Validate() error {
	if !strings.Contains(c.APIEndpoint, "%s") {
		return fmt.Errorf("TELEGRAM_API_ENDPOINT %q: want the form https://host/bot%%s/%%s", c.APIEndpoint)
	}
	if c.EditInterval <= 0 {
		return fmt.Errorf("TELEGRAM_EDIT_INTERVAL must be positive, not %s", c.EditInterval)
	}
	if c.GroupWritesPerMinute <= 0 {
		return fmt.Errorf("TELEGRAM_GROUP_WRITES_PER_MINUTE must be positive, not %d", c.GroupWritesPerMinute)
	}
	if c.WebhookURL != "" && !strings.HasPrefix(c.WebhookURL, "https://") {
		return fmt.Errorf("TELEGRAM_WEBHOOK_URL must be an https:// URL")
	}
	return nil
}

// Grant adds the configured users to access under the adapter's platform
// name.
func (c Config) Grant(access *core.Access) {
	access.Allow(Name, c.AllowedUsers.Strings()...)
	access.Admin(Name, c.AdminUsers.Strings()...)
}

// withDefaults fills what the environment would have, for configs built
// in code.
func (c Config) withDefaults() Config {
	if c.APIEndpoint == "" {
		c.APIEndpoint = tgbotapi.APIEndpoint
	}
	if c.WebhookListen == "" {
		c.WebhookListen = ":8443"
	}
	if c.EditInterval == 0 {
		c.EditInterval = time.Second
	}
	if c.GroupWritesPerMinute == 0 {
		c.GroupWritesPerMinute = 20
	}
	if c.PollTimeout == 0 {
		c.PollTimeout = 30 * time.Second
	}
	return c
}

// Secret is a string that never prints (core.Secret).
type Secret = core.Secret

// UserIDs is a list of numeric Telegram user ids, written comma- or
// space-separated.
type UserIDs []int64

// UnmarshalText parses "123, 456".
func (u *UserIDs) UnmarshalText(b []byte) error {
	*u = nil
	for _, f := range strings.FieldsFunc(string(b), func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return fmt.Errorf("telegram user id %q is not a number (ask @userinfobot, or message the bot: it replies with your id)", f)
		}
		*u = append(*u, id)
	}
	return nil
}

// Strings returns the ids as core.Access expects them.
func (u UserIDs) Strings() []string {
	out := make([]string, len(u))
	for i, id := range u {
		out[i] = strconv.FormatInt(id, 10)
	}
	return out
}

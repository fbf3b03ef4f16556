package discord

import (
	"log/slog"
	"slices"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// Config is the Discord adapter's configuration, read from the environment
// with github.com/caarlos0/env/v11. The bot's own config embeds it.
type Config struct {
	// Token is the bot token from the Developer Portal; with or without the
	// "Bot " prefix. Empty means Discord is not configured.
	Token Secret `env:"DISCORD_TOKEN"`
	// GuildID, when set, registers the slash commands in that server only,
	// which takes effect at once; otherwise they are global.
	GuildID string `env:"DISCORD_GUILD_ID"`
	// AllowedUsers are the user ids the bot serves; "*" is everyone.
	AllowedUsers []string `env:"DISCORD_ALLOWED_USERS"`
	// AllowedRoles admits, in a server, every member who has one of these
	// role ids. DMs carry no roles: there only AllowedUsers count.
	AllowedRoles []string `env:"DISCORD_ALLOWED_ROLES"`
	// AdminUsers are allowed users who may also use admin commands.
	AdminUsers []string `env:"DISCORD_ADMIN_USERS"`
	// Threads makes "/<plugin> start" in a text channel open a thread for
	// the conversation; false keeps it in the channel.
	Threads bool `env:"DISCORD_THREADS" envDefault:"true"`
	// EditInterval is the least time between two edits of one message.
	EditInterval time.Duration `env:"DISCORD_EDIT_INTERVAL" envDefault:"1s"`
	// APIURL is the REST base URL, such as a rate-limit proxy's; the
	// gateway URL is discovered through it.
	APIURL string `env:"DISCORD_API_URL" envDefault:"https://discord.com/api/v9/"`
}

// Enabled reports whether Discord is configured at all.
func (c Config) Enabled() bool { return c.Token != "" }

// ApplyAccess adds the configured users and admins to a. Members admitted
// by AllowedRoles are not listed there: the adapter marks their messages
// core.Message.Allowed.
func (c Config) ApplyAccess(a *core.Access) {
	a.Allow(Name, c.AllowedUsers...)
	a.Admin(Name, c.AdminUsers...)
}

// admits reports whether the configuration lets user (with the member's
// roles, nil outside a server) use the bot. The router decides with
// core.Access; the adapter asks this before work the router never sees:
// autocompletion and opening a thread.
func (c Config) admits(user string, roles []string) bool {
	return slices.Contains(c.AllowedUsers, user) || slices.Contains(c.AllowedUsers, "*") ||
		slices.Contains(c.AdminUsers, user) || c.roleAllowed(roles)
}

func (c Config) roleAllowed(roles []string) bool {
	for _, r := range roles {
		if slices.Contains(c.AllowedRoles, r) {
			return true
		}
	}
	return false
}

// Secret is a string that never prints: fmt and log/slog show it redacted,
// so a logged Config does not leak the bot token.
type Secret string

const redacted = "[redacted]"

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the secret.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// LogValue keeps slog from printing the secret.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps encoders (JSON, YAML) from printing the secret.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

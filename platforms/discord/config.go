package discord

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
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

// Validate reports a configuration the adapter cannot run with.
func (c Config) Validate() error {
	if c.EditInterval <= 0 {
		return fmt.Errorf("DISCORD_EDIT_INTERVAL must be positive, not %s", c.EditInterval)
	}
	if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("DISCORD_API_URL %q: want an http(s) URL such as %s", c.APIURL, defaultAPIURL)
	}
	return nil
}

// defaultAPIURL is Discord's REST API, the version discordgo speaks.
const defaultAPIURL = "https://discord.com/api/v9/"

// withDefaults fills what the environment would have, for configs built
// in code.
func (c Config) withDefaults() Config {
	if c.EditInterval == 0 {
		c.EditInterval = time.Second
	}
	if c.APIURL == "" {
		c.APIURL = defaultAPIURL
	}
	return c
}

// Grant adds the configured users and admins to access. Members admitted
// by AllowedRoles are not listed there: the adapter marks their messages
// core.Message.Allowed, and access only learns that the roles exist, so
// that a roles-only set-up is not reported as serving nobody.
func (c Config) Grant(access *core.Access) {
	access.Allow(Name, c.AllowedUsers...)
	access.Admin(Name, c.AdminUsers...)
	n := 0
	for _, r := range c.AllowedRoles {
		if strings.TrimSpace(r) != "" {
			n++
		}
	}
	if n > 0 {
		access.AllowBy(Name, fmt.Sprintf("members of %d roles (DISCORD_ALLOWED_ROLES)", n))
	}
}

// roleAllowed reports whether one of a member's roles admits them; the
// adapter marks their messages core.Message.Allowed, and Readmit asks it
// again of a member's roles now.
func (c Config) roleAllowed(roles []string) bool {
	for _, r := range roles {
		if slices.Contains(c.AllowedRoles, r) {
			return true
		}
	}
	return false
}

// Secret is a string that never prints (core.Secret).
type Secret = core.Secret

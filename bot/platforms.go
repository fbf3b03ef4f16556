package bot

import (
	"io"
	"log/slog"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/web"
)

// platformDeps is what the adapters are built from besides their config.
// An adapter's Options take each exported field they name (see
// adapterOptions): discord.Options has Plugins, Lookup and Logger.
type platformDeps struct {
	// access grants each platform's users (platformConfig.Grant).
	access  *core.Access
	Plugins []core.Plugin
	// Lookup answers the adapters' questions with the router's policy.
	Lookup core.Lookup
	Logger *slog.Logger
	// SignIn is where the web platform prints its sign-in URL: stderr
	// when it is a terminal, never the log; nil when it is not.
	SignIn io.Writer
	// SignIns keeps the web page's sign-ins beyond the process (NATS).
	SignIns web.SignIns
}

// platformConfig is what every chat platform's configuration can do.
type platformConfig interface {
	Enabled() bool
	Validate() error
	Grant(*core.Access)
}

// buildPlatforms returns the chat platforms (BuiltinPlatforms) whose
// tokens are configured, each with its users granted in access. None
// configured means the console.
func buildPlatforms(cfg Config, d platformDeps) ([]core.Platform, error) {
	var ps []core.Platform
	for _, b := range BuiltinPlatforms {
		pc := b.Config(cfg)
		if !pc.Enabled() {
			continue
		}
		if err := pc.Validate(); err != nil {
			return nil, err
		}
		pc.Grant(d.access)
		p, err := b.New(cfg, d)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

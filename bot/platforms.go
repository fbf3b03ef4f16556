package bot

import (
	"io"
	"log/slog"

	"github.com/jake-bot/jake-bot/core"
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
	// signIns keeps the web page's sign-ins beyond the process (NATS).
	signIns web.SignIns
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

package remote

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/nats-io/nats.go"
)

// Config is how a gateway or a runner reaches NATS, and a runner's name.
type Config struct {
	// URL is the NATS server; empty keeps every turn on this machine.
	URL string `env:"NATS_URL"`
	// Creds is a credentials file (a user JWT and its nkey seed);
	// User/Password or NkeySeed (a file holding an nkey seed) are the
	// other ways to sign in.
	Creds    string `env:"NATS_CREDS"`
	User     string `env:"NATS_USER"`
	Password Secret `env:"NATS_PASSWORD"`
	NkeySeed string `env:"NATS_NKEY"`
	// CA, Cert and Key: TLS, with a client certificate if the server asks
	// for one. A tls:// URL uses TLS with the system's roots.
	CA   string `env:"NATS_CA"`
	Cert string `env:"NATS_CERT"`
	Key  string `env:"NATS_KEY"`
	// RunnerName is what `jakebot runner` answers to (box2 in
	// "/claude start box2:~/src"); empty means the host name.
	RunnerName string `env:"RUNNER_NAME"`
	// GatewayName is what a gateway is called by the others (the
	// standbys' page, /status); empty means the host name.
	GatewayName string `env:"GATEWAY_NAME"`
	// FailoverAfter is the lease's time to live: a standby gateway takes
	// over at most that long after the active one stopped renewing it.
	FailoverAfter time.Duration `env:"FAILOVER_AFTER" envDefault:"10s"`
}

// Enabled reports whether NATS_URL is set.
func (c Config) Enabled() bool { return c.URL != "" }

// Name is the runner's name: RUNNER_NAME, or the host name up to its
// first dot.
func (c Config) Name() (string, error) { return hostOr(c.RunnerName, "RUNNER_NAME", "runner") }

// Gateway is the gateway's name: GATEWAY_NAME, or the host name up to
// its first dot.
func (c Config) Gateway() (string, error) { return hostOr(c.GatewayName, "GATEWAY_NAME", "gateway") }

// hostOr is name, or when it is empty the host name up to its first
// dot, checked to be a valid name (set in variable, for what).
func hostOr(name, variable, what string) (string, error) {
	if name == "" {
		host, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("%s is not set and the host name is unknown: %w", variable, err)
		}
		name, _, _ = strings.Cut(host, ".")
	}
	if !validName(name) {
		return "", fmt.Errorf("%s name %q: want letters, digits, - and _ (set %s)", what, name, variable)
	}
	return name, nil
}

// Connect connects to NATS as the configuration says, reconnecting for
// ever: a gateway and a runner outlive a NATS restart. A runner passes
// RunnerInbox.
func Connect(c Config, clientName string, logger *slog.Logger, more ...nats.Option) (*nats.Conn, error) {
	if !c.Enabled() {
		return nil, errors.New("NATS_URL is not set")
	}
	logger = core.OrDiscard(logger)
	opts := []nats.Option{
		nats.Name(clientName),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { logger.Warn("nats disconnected", "err", err) }),
		nats.ReconnectHandler(func(nc *nats.Conn) { logger.Info("nats reconnected", "server", nc.ConnectedUrlRedacted()) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { logger.Warn("nats", "err", err) }),
	}
	switch {
	case c.Creds != "":
		opts = append(opts, nats.UserCredentials(c.Creds))
	case c.NkeySeed != "":
		o, err := nats.NkeyOptionFromSeed(c.NkeySeed)
		if err != nil {
			return nil, fmt.Errorf("NATS_NKEY: %w", err)
		}
		opts = append(opts, o)
	case c.User != "":
		opts = append(opts, nats.UserInfo(c.User, string(c.Password)))
	}
	if c.CA != "" {
		opts = append(opts, nats.RootCAs(c.CA))
	}
	if c.Cert != "" || c.Key != "" {
		opts = append(opts, nats.ClientCert(c.Cert, c.Key))
	}
	nc, err := nats.Connect(c.URL, append(opts, more...)...)
	if err != nil {
		return nil, fmt.Errorf("nats: connect: %w", err)
	}
	return nc, nil
}

// RunnerInbox makes the replies to runner's own requests come under its
// own subjects, the only ones its NATS user may need to read.
func RunnerInbox(runner string) nats.Option { return nats.CustomInboxPrefix(runnerInbox(runner)) }

// Secret is a string that never prints (core.Secret).
type Secret = core.Secret

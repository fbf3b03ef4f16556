package web

import (
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/jake-bot/jake-bot/core"
)

// Name is the platform's name in conversation keys.
const Name = "web"

// User is the web's one user id: whoever holds the token.
const User = "web"

// Config is the web platform's part of the environment.
type Config struct {
	// Addr is where the page is served; empty turns the platform off. A
	// bare port (":8080") binds to loopback only.
	Addr string `env:"WEB_ADDR"`
	// Token signs a browser in (the sign-in URL carries it once).
	Token Secret `env:"WEB_TOKEN"`
	// Admin makes the web user an admin (/status all, bypass modes…).
	Admin bool `env:"WEB_ADMIN" envDefault:"false"`
	// TLSCert and TLSKey serve HTTPS; without them, put a TLS reverse
	// proxy in front of any address other than loopback.
	TLSCert string `env:"WEB_TLS_CERT"`
	TLSKey  string `env:"WEB_TLS_KEY"`
	// MaxUploadBytes bounds a file sent from the page.
	MaxUploadBytes int64 `env:"WEB_MAX_UPLOAD_BYTES" envDefault:"20971520"`
}

// minTokenLen keeps a guessable token out: the page runs coding agents.
const minTokenLen = 16

// Enabled reports whether WEB_ADDR is set.
func (c Config) Enabled() bool { return c.Addr != "" }

// Validate checks a Config that is Enabled.
func (c Config) Validate() error {
	if len(c.Token) < minTokenLen {
		return fmt.Errorf("web: WEB_TOKEN must be set, at least %d characters (openssl rand -hex 24 makes one)", minTokenLen)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("web: WEB_TLS_CERT and WEB_TLS_KEY go together")
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("web: WEB_ADDR=%q: want host:port or :port: %w", c.Addr, err)
	}
	return nil
}

// ListenAddr is Addr with a bare port bound to loopback: where the page
// listens (and a standby gateway answers in its place).
func (c Config) ListenAddr() string {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil || host != "" {
		return c.Addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// SignInURL is the sign-in URL for a browser on this host: Addr with a
// bare port or an unspecified host (0.0.0.0, [::]) reached on loopback.
// Behind a reverse proxy, the proxy's origin takes its place.
func (c Config) SignInURL() string {
	host, port, err := net.SplitHostPort(c.ListenAddr())
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http://"
	if c.TLSCert != "" {
		scheme = "https://"
	}
	return signInURL(scheme+net.JoinHostPort(host, port), c.Token)
}

// signInURL is origin's sign-in URL, holding the token.
func signInURL(origin string, token Secret) string {
	return origin + "/login?token=" + url.QueryEscape(string(token))
}

// Grant allows the web user in access, as an admin when Admin is set.
func (c Config) Grant(access *core.Access) {
	access.Allow(Name, User)
	if c.Admin {
		access.Admin(Name, User)
	}
}

// Secret is a string that never prints (core.Secret).
type Secret = core.Secret

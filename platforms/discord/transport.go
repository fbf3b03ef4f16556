package discord

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"
)

// rewriter sends the REST calls discordgo addresses to Discord's API to
// DISCORD_API_URL instead. discordgo builds its URLs from package-level
// variables; rewriting in the session's own HTTP client keeps the change
// to one session instead of the whole process.
type rewriter struct {
	from string
	to   string
	base http.RoundTripper
}

// newRewriter returns base itself when to is from (the default URL).
func newRewriter(from, to string, base http.RoundTripper) (http.RoundTripper, error) {
	if to == "" {
		return base, nil
	}
	if !strings.HasSuffix(to, "/") {
		to += "/"
	}
	if to == from {
		return base, nil
	}
	u, err := url.Parse(to)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("discord: DISCORD_API_URL %q is not an http(s) URL", to)
	}
	return rewriter{from: from, to: to, base: base}, nil
}

func (rw rewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	s := req.URL.String()
	if !strings.HasPrefix(s, rw.from) {
		return rw.base.RoundTrip(req)
	}
	u, err := url.Parse(rw.to + strings.TrimPrefix(s, rw.from))
	if err != nil {
		return nil, fmt.Errorf("rewrite %s: %w", req.URL.Path, err)
	}
	req = req.Clone(req.Context())
	req.URL = u
	req.Host = u.Host
	return rw.base.RoundTrip(req)
}

var libraryLogs sync.Once

// routeLibraryLogs sends discordgo's own log lines (errors and warnings
// only, which carry no token) through slog's default logger. discordgo
// has one logger per process, so this is done once.
func routeLibraryLogs() {
	libraryLogs.Do(func() {
		discordgo.Logger = func(level, _ int, format string, a ...any) {
			l := slog.Default().With("platform", Name, "component", "discordgo")
			msg := fmt.Sprintf(format, a...)
			switch level {
			case discordgo.LogError:
				l.Error(msg)
			case discordgo.LogWarning:
				l.Warn(msg)
			default:
				l.Debug(msg)
			}
		}
	})
}

package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
	"github.com/jake-bot/jake-bot/formatter"
)

// Options are what the adapter needs from the rest of the bot.
type Options struct {
	Logger *slog.Logger
	// SignIn is where Run prints the sign-in URL, once: a terminal. The
	// URL holds the token, so it never goes to the log; when nil, the log
	// says how to get it (jakebot web-url).
	SignIn io.Writer
	// Listener, when set, is served instead of listening on Addr (tests
	// take a free port this way).
	Listener net.Listener
	// Lookup is the router's: the page lists the web's conversations it
	// kept in STATE_FILE again after a restart, and its start form
	// suggests the directories the web user may work in.
	Lookup core.Lookup
	// Plugins are the CLIs the start form offers.
	Plugins []core.Plugin
	// Clock times sign-ins and their throttle; nil is the system's.
	Clock core.Clock
	// ReadHeaderTimeout and IdleTimeout bound a connection that sends no
	// request, or half of one; zero takes the defaults (tests shorten
	// them).
	ReadHeaderTimeout, IdleTimeout time.Duration
	// SignIns, when set, keeps the sign-ins beyond this process (NATS
	// with NATS_URL).
	SignIns SignIns
}

// A connection that holds the server without a whole request goes:
// a request's headers come within readHeaderTimeout, a kept-alive
// connection's next request within idleTimeout. Bodies and the event
// stream are not bounded in time (an upload on a slow link, a stream
// that lasts as long as the page).
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
)

// Adapter is the web core.Platform. It is safe for concurrent use.
type Adapter struct {
	format
	cfg      Config
	opts     Options
	logger   *slog.Logger
	store    *store
	sessions *sessions
	logins   *loginThrottle
	clock    core.Clock
	lanes    lanes.PerKey[string]

	mu     sync.Mutex
	h      core.Handler
	runCtx context.Context
	url    string // the page's own origin, once listening
}

var (
	_ core.Platform      = (*Adapter)(nil)
	_ core.ChoiceOfferer = (*Adapter)(nil)
	_ core.FileSender    = (*Adapter)(nil)
	_ core.Reacter       = (*Adapter)(nil)
)

// New returns the adapter; Run serves it.
func New(cfg Config, opts Options) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = core.DefaultAttachmentMaxBytes
	}
	logger := opts.Logger
	logger = core.OrDiscard(logger)
	opts.ReadHeaderTimeout = cmp.Or(opts.ReadHeaderTimeout, readHeaderTimeout)
	opts.IdleTimeout = cmp.Or(opts.IdleTimeout, idleTimeout)
	clock := opts.Clock
	if clock == nil {
		clock = core.SystemClock{}
	}
	a := &Adapter{cfg: cfg, opts: opts, logger: logger.With("platform", Name), store: newStore(), sessions: newSessions(opts.SignIns),
		logins: newLoginThrottle(), clock: clock}
	a.restore()
	return a, nil
}

// restore lists again the web conversations kept across a restart, so
// that the page finds them (their messages were the page's, and are gone).
func (a *Adapter) restore() {
	if a.opts.Lookup == nil {
		return
	}
	entries := a.opts.Lookup.PlatformConversations(Name) // most recently used first
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Key.User != User || e.Key.Channel == "" {
			continue
		}
		a.store.restore(e.Key.Channel, fmt.Sprintf("%s in %s", e.Plugin, filepath.Base(e.Workdir)),
			fmt.Sprintf("jakebot restarted. This %s conversation in %s continues where it was (last used %s); "+
				"the page did not keep its messages, the CLI's session has them.", e.Plugin, e.Shown(e.Workdir), e.LastUsed.UTC().Format("2006-01-02 15:04 MST")))
	}
}

func (a *Adapter) Name() string { return Name }

// format is how the adapter writes to the page.
type format struct{}

// NewFormat returns the adapter's format, the same for every
// configuration.
func NewFormat(Config) core.Format { return format{} }

// Limits: none. The page batches updates to animation frames, so every
// change streams as the CLI writes it.
func (format) Limits() core.Limits { return core.Limits{} }

// pageLimit bounds one message of the page: a browser shows long ones
// well, but the stream sends a message whole at every change.
const pageLimit = 60_000

// Render renders blocks as Markdown, which the page turns into HTML.
func (format) Render(blocks []core.ResponseBlock) []string {
	return formatter.Markdown(blocks, pageLimit)
}

// Run serves the page until ctx is done. It prints the sign-in URL once.
func (a *Adapter) Run(ctx context.Context, h core.Handler) error {
	ln := a.opts.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", a.cfg.ListenAddr()); err != nil {
			return fmt.Errorf("web: listen on %s: %w", a.cfg.ListenAddr(), err)
		}
	}
	scheme := "http"
	if a.cfg.TLSCert != "" {
		scheme = "https"
	}
	origin := scheme + "://" + ln.Addr().String()
	a.mu.Lock()
	a.h, a.runCtx, a.url = h, ctx, origin
	a.mu.Unlock()
	srv := &http.Server{Handler: a.routes(), ReadHeaderTimeout: a.opts.ReadHeaderTimeout, IdleTimeout: a.opts.IdleTimeout,
		ErrorLog:    slog.NewLogLogger(a.logger.Handler(), slog.LevelDebug),
		BaseContext: func(net.Listener) context.Context { return ctx }}
	if a.opts.SignIn != nil {
		fmt.Fprintf(a.opts.SignIn, "Web: sign in at %s\n", signInURL(origin, a.cfg.Token))
		a.logger.Info("serving the web page", "url", origin)
	} else {
		a.logger.Info("serving the web page; its sign-in URL, which holds WEB_TOKEN, is printed only on a terminal: `jakebot web-url` prints it", "url", origin)
	}
	served := make(chan error, 1)
	go func() {
		if a.cfg.TLSCert != "" {
			served <- srv.ServeTLS(ln, a.cfg.TLSCert, a.cfg.TLSKey)
		} else {
			served <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return fmt.Errorf("web: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close() // streams stay open until closed
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web: %w", err)
	}
	a.lanes.Close()
	return nil
}

// URL is the page's origin once Run listens, for tests.
func (a *Adapter) URL() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.url
}

// deliver hands m to the router, in order within its conversation.
func (a *Adapter) deliver(m core.Message) bool {
	a.mu.Lock()
	h, ctx := a.h, a.runCtx
	a.mu.Unlock()
	if h == nil || ctx.Err() != nil {
		return false
	}
	return a.lanes.Do(m.Key.Channel, func() { h(ctx, m) })
}

// Send posts a message in to's conversation.
func (a *Adapter) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	m := a.store.add(to.Channel, &message{From: "bot", Text: text})
	return core.MessageRef{Target: to, ID: m.ID}, nil
}

// Edit replaces a message's text, and its buttons with none.
func (a *Adapter) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	if !a.store.edit(ref.Target.Channel, ref.ID, text) {
		return fmt.Errorf("web: no message %s (it scrolled out of memory)", ref.ID)
	}
	return nil
}

// OfferChoices posts text with a button per choice; a press sends its
// command as the user's message.
func (a *Adapter) OfferChoices(ctx context.Context, to core.Target, text string, choices []core.Choice) (core.MessageRef, error) {
	m := &message{From: "bot", Text: text}
	for _, c := range choices {
		m.Choices = append(m.Choices, choice{Label: c.Label, Command: c.Command})
	}
	m = a.store.add(to.Channel, m)
	return core.MessageRef{Target: to, ID: m.ID}, nil
}

// SendFile posts a file for the page to download.
func (a *Adapter) SendFile(ctx context.Context, to core.Target, name string, data []byte, caption string) (core.MessageRef, error) {
	id := a.store.addFile(name, data)
	m := a.store.add(to.Channel, &message{From: "bot", Text: caption, File: &fileRef{ID: id, Name: name, Size: len(data)}})
	return core.MessageRef{Target: to, ID: m.ID}, nil
}

// marks are the emoji the page shows on a user's message for its turn's
// state, as Discord and Slack react.
var marks = map[core.Reaction]string{
	core.ReactionRunning: "👀", core.ReactionWaiting: "⏳", core.ReactionDone: "✅",
	core.ReactionFailed: "❌", core.ReactionStopped: "🛑", core.ReactionLimit: "🔁",
}

// React marks m on the page with its turn's state (core.Reacter), in
// place of the mark before. A message the page no longer keeps has
// nothing to mark.
func (a *Adapter) React(ctx context.Context, m core.Message, state core.Reaction) error {
	if mark, ok := marks[state]; ok {
		a.store.mark(m.Key.Channel, m.ID, mark)
	}
	return nil
}

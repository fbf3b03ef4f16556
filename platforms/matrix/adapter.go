package matrix

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/recent"
	"github.com/jake-bot/jake-bot/formatter"
)

// Name is the platform's name in conversation keys and access lists.
const Name = "matrix"

// MessageLimit is the most visible characters of a page. An event is at
// most 65536 bytes, and a message carries its text twice (the plain body
// and the HTML, longer by its tags): 4000 characters keep even four-byte
// ones under it.
const MessageLimit = 4000

// memory bounds each of the adapter's recent-id sets.
const memory = 10000

// Compile-time checks of the interfaces the adapter implements.
var (
	_ core.Platform      = (*Adapter)(nil)
	_ core.Typer         = (*Adapter)(nil)
	_ core.Reacter       = (*Adapter)(nil)
	_ core.Notifier      = (*Adapter)(nil)
	_ core.ChoiceOfferer = (*Adapter)(nil)
	_ core.FileSender    = (*Adapter)(nil)
)

// Adapter is the Matrix platform. It is safe for concurrent use once Run
// has started.
type Adapter struct {
	core.Health
	format
	cfg    Config
	cli    *mautrix.Client
	self   id.UserID
	clock  core.Clock
	logger *slog.Logger
	lookup core.Lookup
	plugin string // the plugin hints name
	gate   *gate

	seen      *recent.Map[string, struct{}]   // events handled
	names     *recent.Map[string, string]     // user id → display name
	members   *recent.Map[string, int]        // room → joined members, while known
	encrypted *recent.Map[string, struct{}]   // rooms with m.room.encryption
	shown     *recent.Map[string, shownState] // the user's event → the bot's state reaction on it
	hinted    *core.Spacer                    // places told how to start, or that encryption is refused
	offers    *recent.Map[string, offer]      // the bot's events offering choices
	reactMu   sync.Mutex                      // one state change at a time per adapter
}

// shownState is the reaction React left on a user's event.
type shownState struct{ key, reaction string }

// Options are what the adapter needs from the rest of the bot; each zero
// value is a working default. It never sees the router: it gets a
// core.Handler in Run.
type Options struct {
	// Plugins name the plugin the adapter's hints suggest (the first).
	Plugins []core.Plugin
	// Lookup answers with the router's policy whether a thread has a
	// conversation and whom the router serves. Nil serves nobody.
	Lookup core.Lookup
	// Clock times the rate-limit waits and reconnection; nil is the
	// system clock.
	Clock core.Clock
	// HTTPClient makes the requests; nil is a default client.
	HTTPClient *http.Client
	// SyncTimeout is how long one /sync long poll waits on the server;
	// zero is 30 seconds.
	SyncTimeout time.Duration
	Logger      *slog.Logger
}

// New returns an adapter for cfg. It fails when cfg does not validate; it
// does not connect until Run.
func New(cfg Config, opts Options) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := homeserverURL(cfg.Homeserver)
	cli, err := mautrix.NewClient(base, id.UserID(cfg.UserID), string(cfg.AccessToken))
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	cli.Client = opts.HTTPClient
	if cli.Client == nil {
		cli.Client = &http.Client{Timeout: 2 * time.Minute}
	}
	// The coordinator and the adapter's gate wait out a 429 on the
	// injected clock: mautrix would sleep on its own.
	cli.DefaultHTTPRetries = 0
	cli.IgnoreRateLimit = true
	cli.Log = zerolog.Nop()
	var clock core.Clock = core.SystemClock{}
	if opts.Clock != nil {
		clock = opts.Clock
	}
	a := &Adapter{
		format:    NewFormat(cfg).(format),
		cfg:       cfg,
		cli:       cli,
		self:      id.UserID(cfg.UserID),
		clock:     clock,
		logger:    core.OrDiscard(opts.Logger).With("platform", Name),
		lookup:    opts.Lookup,
		plugin:    "claude",
		gate:      &gate{clock: clock},
		seen:      recent.New[string, struct{}](memory),
		names:     recent.New[string, string](memory),
		members:   recent.New[string, int](memory),
		encrypted: recent.New[string, struct{}](memory),
		shown:     recent.New[string, shownState](memory),
		hinted:    core.NewSpacer(memory, hintEvery, clock.Now),
		offers:    recent.New[string, offer](memory),
	}
	a.format.syncTimeout = cmp.Or(opts.SyncTimeout, 30*time.Second)
	if a.lookup == nil {
		a.lookup = core.NoLookup{}
	}
	if len(opts.Plugins) > 0 {
		a.plugin = opts.Plugins[0].ID()
	}
	return a, nil
}

// Name returns "matrix".
func (a *Adapter) Name() string { return Name }

// format is how the adapter writes to Matrix.
type format struct {
	editInterval, roomInterval time.Duration
	roomBurst                  int
	limit                      int
	syncTimeout                time.Duration
}

// NewFormat returns the adapter's format for cfg, without connecting.
func NewFormat(cfg Config) core.Format {
	f := format{editInterval: cmp.Or(cfg.EditInterval, time.Second), roomInterval: cfg.RoomInterval, roomBurst: cfg.RoomBurst, limit: MessageLimit}
	if f.roomInterval == 0 && f.roomBurst == 0 {
		f.roomInterval, f.roomBurst = 500*time.Millisecond, 5 // the environment's defaults
	}
	return f
}

// Limits returns the configured edit interval and the per-room bound.
// The homeserver's own limit is per account and answered with 429s,
// which the coordinator waits out.
func (f format) Limits() core.Limits {
	return core.Limits{EditInterval: f.editInterval, ChannelInterval: f.roomInterval, ChannelBurst: f.roomBurst}
}

// Render renders blocks as Matrix HTML pages (formatter.Matrix).
func (f format) Render(blocks []core.ResponseBlock) []string {
	return formatter.Matrix(blocks, f.limit)
}

// content is a message's content for a rendered page: m.notice, so that
// the reply's pages do not notify (the default push rules suppress
// notices; Notify sends m.text), with an empty m.mentions that mentions
// nobody, in to's thread.
func content(to core.Target, html string) *event.MessageEventContent {
	c := &event.MessageEventContent{
		MsgType: event.MsgNotice, Body: formatter.MatrixPlain(html),
		Format: event.FormatHTML, FormattedBody: html, Mentions: &event.Mentions{},
	}
	inThread(c, to)
	return c
}

// inThread puts c in to's thread, with the reply fallback clients
// without threads show.
func inThread(c *event.MessageEventContent, to core.Target) {
	if to.Thread != "" {
		c.RelatesTo = (&event.RelatesTo{}).SetThread(id.EventID(to.Thread), id.EventID(to.Thread))
	}
}

// send sends a message event and returns its id.
func (a *Adapter) send(ctx context.Context, room string, typ event.Type, c any) (string, error) {
	resp, err := a.cli.SendMessageEvent(ctx, id.RoomID(room), typ, c)
	if err != nil {
		return "", a.apiError(err)
	}
	return resp.EventID.String(), nil
}

// Send posts a page in to's thread.
func (a *Adapter) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	eventID, err := a.send(ctx, to.Channel, event.EventMessage, content(to, text))
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("matrix: send: %w", err)
	}
	return core.MessageRef{Target: to, ID: eventID}, nil
}

// Edit replaces a message the bot sent with an m.replace event. Its
// fallback, for clients without edits, is the plain text after "* ";
// the HTML is in m.new_content only, which keeps the event within its
// size limit. A message that offered choices loses the bot's reactions.
func (a *Adapter) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	if !strings.HasPrefix(ref.ID, "$") {
		return fmt.Errorf("matrix: bad event id %q", ref.ID)
	}
	c := content(core.Target{}, text)
	c.SetEdit(id.EventID(ref.ID))
	c.Format, c.FormattedBody = "", ""
	if _, err := a.send(ctx, ref.Target.Channel, event.EventMessage, c); err != nil {
		return fmt.Errorf("matrix: edit: %w", err)
	}
	if off, ok := a.offers.Get(ref.ID); ok {
		a.offers.Delete(ref.ID)
		a.unoffer(ctx, ref.Target.Channel, off)
	}
	return nil
}

// Typing shows the bot typing in to's room; nothing while the
// homeserver's limit is spent.
func (a *Adapter) Typing(ctx context.Context, to core.Target) error {
	if a.gate.blocked() > 0 {
		return nil
	}
	_, err := a.cli.UserTyping(ctx, id.RoomID(to.Channel), true, 10*time.Second)
	if err = a.apiError(err); err != nil {
		if _, limited := core.AsRateLimit(err); limited {
			return nil
		}
		return fmt.Errorf("matrix: typing: %w", err)
	}
	return nil
}

// reactionKeys are the emoji each state of a turn shows on the user's
// message.
var reactionKeys = map[core.Reaction]string{
	core.ReactionRunning: "👀", core.ReactionWaiting: "⏳", core.ReactionDone: "✅",
	core.ReactionFailed: "❌", core.ReactionStopped: "🛑", core.ReactionLimit: "🔁",
}

// React shows state on m's event (core.Reacter): an m.annotation with
// the state's emoji, and the one shown before redacted, so that the
// message shows one.
func (a *Adapter) React(ctx context.Context, m core.Message, state core.Reaction) error {
	key, ok := reactionKeys[state]
	if !ok || !strings.HasPrefix(m.ID, "$") {
		return nil // a reaction's choice: no message of the user's
	}
	a.reactMu.Lock()
	defer a.reactMu.Unlock()
	prev, had := a.shown.Get(m.ID)
	if had && prev.key == key {
		return nil
	}
	if err := a.gate.wait(ctx); err != nil {
		return err
	}
	reaction, err := a.annotate(ctx, m.Key.Channel, m.ID, key)
	if err != nil {
		return fmt.Errorf("matrix: react: %w", err)
	}
	a.shown.Set(m.ID, shownState{key: key, reaction: reaction})
	if had {
		a.redact(ctx, m.Key.Channel, prev.reaction)
	}
	return nil
}

// annotate reacts with key on eventID and returns the reaction's id.
func (a *Adapter) annotate(ctx context.Context, room, eventID, key string) (string, error) {
	c := &event.ReactionEventContent{RelatesTo: *(&event.RelatesTo{}).SetAnnotation(id.EventID(eventID), key)}
	return a.send(ctx, room, event.EventReaction, c)
}

// redact removes one of the bot's events (a reaction), logging what
// fails: what it stood for is over either way.
func (a *Adapter) redact(ctx context.Context, room, eventID string) {
	if err := a.gate.wait(ctx); err != nil {
		return
	}
	if _, err := a.cli.RedactEvent(ctx, id.RoomID(room), id.EventID(eventID)); err != nil {
		a.logger.Warn("redact", "room", room, "event", eventID, "err", a.apiError(err))
	}
}

// Notify sends text in to's thread as m.text mentioning user (a pill in
// the HTML and m.mentions), which notifies them where an edit or a
// notice does not.
func (a *Adapter) Notify(ctx context.Context, to core.Target, user string, why core.NotifyReason, text string) error {
	if !ValidUserID(user) {
		return fmt.Errorf("matrix: notify: bad user id %q", user)
	}
	pages := formatter.Matrix([]core.ResponseBlock{{Kind: core.BlockText, Text: text}}, a.limit)
	if len(pages) == 0 {
		return nil
	}
	name, _ := a.names.Get(user)
	name = cmp.Or(name, user)
	c := content(to, `<a href="https://matrix.to/#/`+htmlEscape(user)+`">`+htmlEscape(name)+`</a> `+pages[0])
	c.MsgType = event.MsgText
	c.Mentions = &event.Mentions{UserIDs: []id.UserID{id.UserID(user)}}
	if err := a.gate.wait(ctx); err != nil {
		return err
	}
	if _, err := a.send(ctx, to.Channel, event.EventMessage, c); err != nil {
		return fmt.Errorf("matrix: notify: %w", err)
	}
	return nil
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// apiError makes a 429 (M_LIMIT_EXCEEDED) a core.RateLimitError after
// the homeserver's retry_after_ms (or Retry-After), and holds the
// adapter's other writes as long; other errors pass as they are.
func (a *Adapter) apiError(err error) error {
	if err == nil {
		return nil
	}
	var he mautrix.HTTPError
	if !errors.As(err, &he) || !he.IsStatus(http.StatusTooManyRequests) {
		return err
	}
	wait := time.Second // neither says: a guess
	var ms any
	if he.RespError != nil {
		ms = he.RespError.ExtraData["retry_after_ms"]
	}
	if ms, ok := ms.(float64); ok && ms >= 0 {
		wait = time.Duration(ms) * time.Millisecond
	} else if s, perr := strconv.Atoi(he.Response.Header.Get("Retry-After")); perr == nil && s >= 0 {
		wait = time.Duration(s) * time.Second
	}
	a.gate.hold(wait)
	return &core.RateLimitError{RetryAfter: wait, Err: err}
}

package mattermost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/recent"
	"github.com/jake-bot/jake-bot/formatter"
)

// Name is the platform's name in conversation keys and access lists.
const Name = "mattermost"

// MessageLimit is the most runes a post may hold (the server's
// PostMessageMaxRunesV2).
const MessageLimit = 16383

// memory bounds each of the adapter's recent-id sets.
const memory = 10000

// Compile-time checks of the interfaces the adapter implements.
var (
	_ core.Platform      = (*Adapter)(nil)
	_ core.Typer         = (*Adapter)(nil)
	_ core.Reacter       = (*Adapter)(nil)
	_ core.Notifier      = (*Adapter)(nil)
	_ core.Refuser       = (*Adapter)(nil)
	_ core.ChoiceOfferer = (*Adapter)(nil)
	_ core.FileSender    = (*Adapter)(nil)
)

// Adapter is the Mattermost platform. It is safe for concurrent use once
// Run has started.
type Adapter struct {
	core.Health
	format
	cfg      Config
	api      *client
	wsURL    string
	dialer   *websocket.Dialer
	clock    core.Clock
	logger   *slog.Logger
	lookup   core.Lookup
	plugin   string // the plugin hints name
	commands *core.Commands
	listener net.Listener

	// self is the bot's own account, learnt from /users/me when Run
	// starts.
	self atomic.Pointer[user]

	seen     *recent.Map[string, struct{}] // posts handled
	names    *recent.Map[string, string]   // user id → username
	lastUsed *recent.Map[string, string]   // "channel/user" → the thread that user last used there
	shown    *recent.Map[string, string]   // the reaction React left on each post
	added    *recent.Map[string, string]   // the reaction React added last, perhaps with the one before still there
	hinted   *core.Spacer                  // places told how to start
	offers   *offers
}

// user is a Mattermost account.
type user struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

// Options are what the adapter needs from the rest of the bot; each zero
// value is a working default. It never sees the router: it gets a
// core.Handler in Run.
type Options struct {
	// Plugins name the plugin the adapter's hints suggest (the first).
	Plugins []core.Plugin
	// Lookup answers with the router's policy whether a thread has a
	// conversation and whom the router serves, asked before a hint.
	// Nil serves nobody.
	Lookup core.Lookup
	// Clock times the rate-limit gate and reconnection; nil is the
	// system clock.
	Clock core.Clock
	// HTTPClient makes the REST calls; nil is a default client.
	HTTPClient *http.Client
	// Listener, when set, serves the button callbacks instead of
	// listening on Config.ActionsListen.
	Listener net.Listener
	// MessageLimit is the length, in runes, at which a reply continues
	// in a new post; zero is MessageLimit.
	MessageLimit int
	Logger       *slog.Logger
}

// New returns an adapter for cfg. It fails when cfg does not validate; it
// does not connect until Run.
func New(cfg Config, opts Options) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := serverURL(cfg.URL)
	var clock core.Clock = core.SystemClock{}
	if opts.Clock != nil {
		clock = opts.Clock
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{Timeout: time.Minute}
	}
	ws := "ws" + strings.TrimPrefix(base, "http") + "/api/v4/websocket"
	a := &Adapter{
		format:   NewFormat(cfg).(format),
		cfg:      cfg,
		api:      &client{base: base, token: string(cfg.Token), http: httpClient, gate: newGate(clock)},
		wsURL:    ws,
		dialer:   &websocket.Dialer{HandshakeTimeout: 30 * time.Second, Proxy: http.ProxyFromEnvironment},
		clock:    clock,
		logger:   core.OrDiscard(opts.Logger).With("platform", Name),
		lookup:   opts.Lookup,
		plugin:   "claude",
		listener: opts.Listener,
		seen:     recent.New[string, struct{}](memory),
		names:    recent.New[string, string](memory),
		lastUsed: recent.New[string, string](memory),
		shown:    recent.New[string, string](memory),
		added:    recent.New[string, string](memory),
		hinted:   core.NewSpacer(memory, hintEvery, clock.Now),
		offers:   newOffers(),
		commands: core.NewCommands(opts.Plugins),
	}
	if a.lookup == nil {
		a.lookup = core.NoLookup{}
	}
	if len(opts.Plugins) > 0 {
		a.plugin = opts.Plugins[0].ID()
	}
	if opts.MessageLimit > 0 {
		a.format.limit = opts.MessageLimit
	}
	return a, nil
}

// me returns the bot's own account; before Run has asked the server, an
// empty one, which no post nor id matches.
func (a *Adapter) me() user {
	if u := a.self.Load(); u != nil {
		return *u
	}
	return user{}
}

// Name returns "mattermost".
func (a *Adapter) Name() string { return Name }

// format is how the adapter writes to Mattermost.
type format struct {
	editInterval time.Duration
	limit        int // runes in a post
}

// NewFormat returns the adapter's format for cfg, without connecting.
func NewFormat(cfg Config) core.Format {
	return format{editInterval: cmp.Or(cfg.EditInterval, time.Second), limit: MessageLimit}
}

// Limits returns the configured edit interval. The server's rate limit is
// the bot's across the server, which the adapter's gate holds.
func (f format) Limits() core.Limits { return core.Limits{EditInterval: f.editInterval} }

// Render renders blocks as Mattermost markdown, in pages of at most the
// post limit: a code block cut between pages is closed and reopened.
func (f format) Render(blocks []core.ResponseBlock) []string {
	return formatter.Markdown(blocks, f.limit)
}

// post is a Mattermost post, with the fields the adapter reads or writes.
type post struct {
	ID        string         `json:"id,omitempty"`
	UserID    string         `json:"user_id,omitempty"`
	ChannelID string         `json:"channel_id,omitempty"`
	RootID    string         `json:"root_id,omitempty"`
	Message   string         `json:"message"`
	Type      string         `json:"type,omitempty"`
	Props     map[string]any `json:"props,omitempty"`
	FileIDs   []string       `json:"file_ids,omitempty"`
	Metadata  *struct {
		Files []fileInfo `json:"files"`
	} `json:"metadata,omitempty"`
}

// create posts p and returns its id.
func (a *Adapter) create(ctx context.Context, p post) (string, error) {
	var out post
	if err := a.api.call(ctx, http.MethodPost, "/posts", p, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// Send posts text in to's thread.
func (a *Adapter) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	id, err := a.create(ctx, post{ChannelID: to.Channel, RootID: to.Thread, Message: text})
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("mattermost: send: %w", err)
	}
	return core.MessageRef{Target: to, ID: id}, nil
}

// Edit replaces the text of a post the bot made. A post that offered
// choices loses its buttons (its props) or the bot's reactions.
func (a *Adapter) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	if !validID(ref.ID) {
		return fmt.Errorf("mattermost: bad post id %q", ref.ID)
	}
	patch := map[string]any{"message": text}
	offer, offered := a.offers.taken(ref.ID)
	if offered && offer.buttons {
		patch["props"] = map[string]any{}
	}
	if err := a.api.call(ctx, http.MethodPut, "/posts/"+ref.ID+"/patch", patch, nil); err != nil {
		if offered {
			a.offers.put(ref.ID, offer) // the next try removes them
		}
		return fmt.Errorf("mattermost: edit: %w", err)
	}
	if offered && !offer.buttons {
		a.unreact(ctx, ref.ID, offer.emoji...)
	}
	return nil
}

// Typing shows the bot typing in to's thread; it does nothing while the
// rate limit is spent.
func (a *Adapter) Typing(ctx context.Context, to core.Target) error {
	if a.api.gate.blocked(ctx) > 0 || ctx.Err() != nil {
		return nil
	}
	err := a.api.call(ctx, http.MethodPost, "/users/me/typing", map[string]string{"channel_id": to.Channel, "parent_id": to.Thread}, nil)
	if _, limited := core.AsRateLimit(err); limited {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mattermost: typing: %w", err)
	}
	return nil
}

// reactionNames are the emoji each state of a turn shows: names of
// Mattermost's system emoji.
var reactionNames = map[core.Reaction]string{
	core.ReactionRunning: "eyes", core.ReactionWaiting: "hourglass_flowing_sand", core.ReactionDone: "white_check_mark",
	core.ReactionFailed: "x", core.ReactionStopped: "octagonal_sign", core.ReactionLimit: "repeat",
}

// React shows state on m's post (core.Reacter): its emoji is added, then
// the one shown before removed, so that the post always shows one. Tried
// again after a 429, the step that was done is not done again: each call
// spends the bot's rate limit.
func (a *Adapter) React(ctx context.Context, m core.Message, state core.Reaction) error {
	name, ok := reactionNames[state]
	if !ok || !validID(m.ID) || isPress(m) {
		return nil // a button's press: no post of the user's
	}
	if added, _ := a.added.Get(m.ID); added != name {
		if err := a.react(ctx, m.ID, name); err != nil {
			return fmt.Errorf("mattermost: react: %w", err)
		}
		a.added.Set(m.ID, name)
	}
	if prev, ok := a.shown.Get(m.ID); ok && prev != name {
		if err := a.unreactOne(ctx, m.ID, prev); err != nil {
			return fmt.Errorf("mattermost: react: %w", err)
		}
	}
	a.shown.Set(m.ID, name)
	return nil
}

func (a *Adapter) react(ctx context.Context, postID, emoji string) error {
	return a.api.call(ctx, http.MethodPost, "/reactions", map[string]string{"user_id": a.me().ID, "post_id": postID, "emoji_name": emoji}, nil)
}

func (a *Adapter) unreactOne(ctx context.Context, postID, emoji string) error {
	err := a.api.call(ctx, http.MethodDelete, "/users/me/posts/"+postID+"/reactions/"+url.PathEscape(emoji), nil, nil)
	if statusOf(err) == http.StatusNotFound {
		return nil
	}
	return err
}

// unreact removes the bot's reactions emoji from a post, logging what
// fails: the post's text already says the choice is over.
func (a *Adapter) unreact(ctx context.Context, postID string, emoji ...string) {
	for _, e := range emoji {
		if err := a.unreactOne(ctx, postID, e); err != nil {
			a.logger.Warn("remove a choice's reaction", "post", postID, "emoji", e, "err", err)
		}
	}
}

// Notify posts text in to's thread with an @mention of user, which
// notifies them where an edit, or a reply in a thread they do not follow,
// may not.
func (a *Adapter) Notify(ctx context.Context, to core.Target, user string, why core.NotifyReason, text string) error {
	name, err := a.username(ctx, user)
	if err != nil {
		return fmt.Errorf("mattermost: notify: %w", err)
	}
	pages := a.Render([]core.ResponseBlock{{Kind: core.BlockText, Text: "@" + name + " " + text}})
	if len(pages) == 0 {
		return nil
	}
	if err := a.api.gate.wait(ctx); err != nil {
		return err
	}
	_, err = a.Send(ctx, to, pages[0])
	return err
}

// username returns the username of user id, from the events seen or, for
// one not seen, from the server.
func (a *Adapter) username(ctx context.Context, id string) (string, error) {
	if name, ok := a.names.Get(id); ok {
		return name, nil
	}
	if !validID(id) {
		return "", fmt.Errorf("bad user id %q", id)
	}
	var u user
	if err := a.api.call(ctx, http.MethodGet, "/users/"+id, nil, &u); err != nil {
		return "", err
	}
	a.names.Set(id, u.Username)
	return u.Username, nil
}

// errNotPrivate makes the router refuse a message in the chat: only a
// button press has a private answer (its ephemeral text).
var errNotPrivate = errors.New("mattermost: no private reply for a message")

// Refuse answers a button press by a user who is not allowed with an
// ephemeral message only they see. A message gets errNotPrivate, and so
// the router's reply: a bot needs the create_post_ephemeral permission,
// which Mattermost gives system admins only, to answer a post privately.
func (a *Adapter) Refuse(ctx context.Context, m core.Message, text string) error {
	if !isPress(m) || !a.offers.answer(pressID(m), text) {
		return errNotPrivate
	}
	return nil
}

// validID reports whether s has the form of a Mattermost id: 26 lower-case
// letters and digits. An id goes into a URL's path.
func validID(s string) bool {
	if len(s) != 26 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

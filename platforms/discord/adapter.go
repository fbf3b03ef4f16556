package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
	"github.com/jake-bot/jake-bot/core/recent"
	"github.com/jake-bot/jake-bot/formatter"
)

// Name is the platform's name in conversation keys and logs.
const Name = "discord"

// maxLen is Discord's limit on a message's content.
const maxLen = 2000

// intents are the gateway events the bot needs. MessageContent is
// privileged: without it Discord blanks the text of guild messages that do
// not mention the bot, so mentions, DMs and slash commands still work.
const intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentsDirectMessages | discordgo.IntentMessageContent

// discordAPI lists the discordgo calls the adapter makes, so a test can
// stand in for the session. *discordgo.Session implements it.
type discordAPI interface {
	AddHandler(handler any) func()
	Open() error
	Close() error
	Channel(channelID string, options ...discordgo.RequestOption) (*discordgo.Channel, error)
	ChannelEdit(channelID string, data *discordgo.ChannelEdit, options ...discordgo.RequestOption) (*discordgo.Channel, error)
	ChannelTyping(channelID string, options ...discordgo.RequestOption) error
	ChannelMessageSendComplex(channelID string, data *discordgo.MessageSend, options ...discordgo.RequestOption) (*discordgo.Message, error)
	ChannelMessageEditComplex(m *discordgo.MessageEdit, options ...discordgo.RequestOption) (*discordgo.Message, error)
	ThreadStartComplex(channelID string, data *discordgo.ThreadStart, options ...discordgo.RequestOption) (*discordgo.Channel, error)
	ApplicationCommandBulkOverwrite(appID, guildID string, commands []*discordgo.ApplicationCommand, options ...discordgo.RequestOption) ([]*discordgo.ApplicationCommand, error)
	InteractionRespond(i *discordgo.Interaction, resp *discordgo.InteractionResponse, options ...discordgo.RequestOption) error
	InteractionResponseEdit(i *discordgo.Interaction, edit *discordgo.WebhookEdit, options ...discordgo.RequestOption) (*discordgo.Message, error)
	InteractionResponseDelete(i *discordgo.Interaction, options ...discordgo.RequestOption) error
	FollowupMessageCreate(i *discordgo.Interaction, wait bool, data *discordgo.WebhookParams, options ...discordgo.RequestOption) (*discordgo.Message, error)
	GuildMember(guildID, userID string, options ...discordgo.RequestOption) (*discordgo.Member, error)
	MessageReactionAdd(channelID, messageID, emojiID string, options ...discordgo.RequestOption) error
	MessageReactionRemove(channelID, messageID, emojiID, userID string, options ...discordgo.RequestOption) error
}

var _ discordAPI = (*discordgo.Session)(nil)

// Options are what the adapter needs from the rest of the bot. It never
// sees the router: it gets a core.Handler in Run.
type Options struct {
	// Plugins get one application command each.
	Plugins []core.Plugin
	// Lookup answers with the router's policy what the adapter asks
	// before a message reaches the router: whether a plain message in a
	// server is in a conversation (else the bot waits for a mention), and
	// what autocompletion offers. Nil serves nobody.
	Lookup core.Lookup
	Logger *slog.Logger
}

// Adapter is the Discord core.Platform. It is safe for concurrent use.
type Adapter struct {
	core.Health
	format
	api     discordAPI
	files   *http.Client // attachment downloads
	cfg     Config
	lookup  core.Lookup
	plugins map[string]core.Plugin
	// commands is core's command table for the plugins.
	commands *core.Commands
	logger   *slog.Logger

	// withoutMessageContent drops the privileged intent from the next
	// IDENTIFY; nil when the session is not a real one.
	withoutMessageContent func()

	seen     *recent.Map[string, struct{}]
	reacted  *recent.Map[string, string] // the reaction React left on each message
	lanes    lanes.PerKey[core.ConversationKey]
	channels *recent.Map[string, channelInfo] // channels' types and owners
	holds    core.Holds                       // threads being opened, until their conversation is registered
	hinted   *core.Spacer                     // threads told they have no conversation
	// hint is what a message in a thread of the bot's without a
	// conversation is told.
	hint  string
	ready chan struct{}

	mu        sync.Mutex
	botID     string
	appID     string
	readyOnce bool
	h         core.Handler
	runCtx    context.Context
	stopping  bool
	pending   map[string]*interaction
	names     *recent.Map[string, threadNaming] // threads awaiting their owner's first words
}

var (
	_ core.Platform      = (*Adapter)(nil)
	_ core.Typer         = (*Adapter)(nil)
	_ core.Refuser       = (*Adapter)(nil)
	_ core.ChoiceOfferer = (*Adapter)(nil)
	_ core.ThreadOpener  = (*Adapter)(nil)
	_ core.Readmitter    = (*Adapter)(nil)
)

// New returns an adapter on a real discordgo session. It does not connect:
// Run does. It fails when the token is missing or the configuration is
// invalid. discordgo's own rate-limit retry is turned off, since it
// sleeps inside the call; the coordinator waits instead.
func New(cfg Config, opts Options) (*Adapter, error) {
	if !cfg.Enabled() {
		return nil, errors.New("discord: DISCORD_TOKEN is not set")
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	token := string(cfg.Token)
	if !strings.HasPrefix(token, "Bot ") {
		token = "Bot " + token
	}
	s, err := discordgo.New(token)
	if err != nil {
		return nil, fmt.Errorf("discord: new session: %w", err)
	}
	s.ShouldRetryOnRateLimit = false
	// Events are handled in the gateway's read loop, so they reach the
	// router in the order Discord sent them; the handlers only enqueue.
	s.SyncEvents = true
	s.Identify.Intents = intents
	rt, err := newRewriter(discordgo.EndpointAPI, cfg.APIURL, http.DefaultTransport)
	if err != nil {
		return nil, err
	}
	s.Client = &http.Client{Timeout: 20 * time.Second, Transport: rt}
	routeLibraryLogs()
	a := newAdapter(s, cfg, opts)
	a.files = &http.Client{Timeout: 2 * time.Minute, Transport: rt}
	a.withoutMessageContent = func() { s.Identify.Intents = intents &^ discordgo.IntentMessageContent }
	return a, nil
}

func newAdapter(api discordAPI, cfg Config, opts Options) *Adapter {
	cfg = cfg.withDefaults()
	logger := opts.Logger
	logger = core.OrDiscard(logger)
	a := &Adapter{
		format:   format{editInterval: cfg.EditInterval},
		api:      api,
		files:    &http.Client{Timeout: 2 * time.Minute},
		cfg:      cfg,
		lookup:   opts.Lookup,
		plugins:  make(map[string]core.Plugin),
		logger:   logger.With("platform", Name),
		seen:     recent.New[string, struct{}](4096),
		reacted:  recent.New[string, string](4096),
		ready:    make(chan struct{}),
		pending:  make(map[string]*interaction),
		names:    recent.New[string, threadNaming](1024),
		channels: recent.New[string, channelInfo](maxChannelTypes),
		hinted:   core.NewSpacer(1024, hintEvery, nil),
	}
	if a.lookup == nil {
		a.lookup = core.NoLookup{}
	}
	for _, p := range opts.Plugins {
		a.plugins[p.ID()] = p
	}
	if len(opts.Plugins) > 0 {
		a.hint = orphanHint(opts.Plugins[0].ID())
	}
	a.commands = core.NewCommands(opts.Plugins)
	return a
}

// Name returns "discord".
func (a *Adapter) Name() string { return Name }

// channelInterval spaces writes to one channel so that no five-second
// window holds more than five, Discord's per-channel message budget.
const channelInterval = 1250 * time.Millisecond

// format is how the adapter writes to Discord.
type format struct{ editInterval time.Duration }

// NewFormat returns the adapter's format for cfg, without connecting.
func NewFormat(cfg Config) core.Format { return format{editInterval: cfg.withDefaults().EditInterval} }

// Limits allows one edit per EditInterval per message and at most five
// writes in any five seconds per channel (or thread).
func (f format) Limits() core.Limits {
	return core.Limits{EditInterval: f.editInterval, ChannelInterval: channelInterval, ChannelBurst: 1}
}

// Render renders blocks as Discord markdown in pages of at most 2000
// characters.
func (format) Render(blocks []core.ResponseBlock) []string { return formatter.Markdown(blocks, maxLen) }

// Run connects to the gateway, registers the slash commands, and passes
// messages and commands to h until ctx is cancelled. It returns an error
// when it cannot connect or register the commands.
func (a *Adapter) Run(ctx context.Context, h core.Handler) error {
	a.mu.Lock()
	if a.h != nil {
		a.mu.Unlock()
		return errors.New("discord: Run called twice")
	}
	a.h, a.runCtx = h, ctx
	a.mu.Unlock()

	for _, f := range []any{a.onReady, a.onMessage, a.onInteraction, a.onThreadCreate, a.onResumed, a.onDisconnect} {
		defer a.api.AddHandler(f)()
	}
	if err := a.open(); err != nil {
		return err
	}
	defer a.close()
	select {
	case <-a.ready:
	case <-ctx.Done():
		return nil
	}
	if err := a.registerCommands(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	<-ctx.Done()
	return nil
}

// closeDisallowedIntents is the gateway's close code for privileged
// intents the application has not enabled in the Developer Portal.
const closeDisallowedIntents = 4014

// open connects to the gateway. When Discord refuses the Message Content
// intent because it is not enabled for the application, it connects
// without it: mentions, DMs and slash commands still work.
func (a *Adapter) open() error {
	err := a.api.Open()
	if websocket.IsCloseError(err, closeDisallowedIntents) && a.withoutMessageContent != nil {
		a.logger.Warn("the Message Content intent is not enabled for this application in the Discord Developer " +
			"Portal; continuing without it: only mentions, DMs and slash commands reach the bot")
		a.withoutMessageContent()
		err = a.api.Open()
	}
	if err != nil {
		return fmt.Errorf("discord: connect: %w", err)
	}
	return nil
}

// close stops passing events on, waits for the handler calls under way and
// closes the gateway connection.
func (a *Adapter) close() {
	a.mu.Lock()
	a.stopping = true
	a.mu.Unlock()
	a.lanes.Close()
	if err := a.api.Close(); err != nil {
		a.logger.Warn("close gateway", "err", err)
	}
}

// onResumed and onDisconnect follow the gateway connection for /healthz;
// discordgo reconnects by itself.
func (a *Adapter) onResumed(_ *discordgo.Session, _ *discordgo.Resumed) { a.Set(nil) }

func (a *Adapter) onDisconnect(_ *discordgo.Session, _ *discordgo.Disconnect) {
	a.Set(errors.New("gateway disconnected, reconnecting"))
}

func (a *Adapter) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.User != nil {
		a.botID = r.User.ID
	}
	if r.Application != nil {
		a.appID = r.Application.ID
	}
	a.logger.Info("connected", "bot", a.botID, "application", a.appID, "guilds", len(r.Guilds))
	a.Set(nil)
	if !a.readyOnce {
		a.readyOnce = true
		close(a.ready)
	}
}

func (a *Adapter) registerCommands(ctx context.Context) error {
	a.mu.Lock()
	appID := a.appID
	a.mu.Unlock()
	cmds := applicationCommands(a.commands, a.plugins)
	if _, err := a.api.ApplicationCommandBulkOverwrite(appID, a.cfg.GuildID, cmds, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord: register slash commands (guild %q): %w", a.cfg.GuildID, err)
	}
	a.logger.Info("registered slash commands", "count", len(cmds), "guild", a.cfg.GuildID)
	return nil
}

func (a *Adapter) self() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botID
}

// handler returns the router's handler and Run's context, or false once
// Run is stopping.
func (a *Adapter) handler() (core.Handler, context.Context, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.h, a.runCtx, a.h != nil && !a.stopping
}

// apiError wraps err from a Discord call, turning discordgo's rate-limit
// error into core's so the coordinator waits and retries.
func apiError(op string, err error) error {
	return core.APIError("discord "+op, err, func(rl *discordgo.RateLimitError) time.Duration { return rl.RetryAfter })
}

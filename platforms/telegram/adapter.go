package telegram

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/recent"
	"github.com/jake-bot/jake-bot/formatter"
)

const Name = "telegram"

// botAPI is the part of the client library the adapter uses: raw requests
// (raw.go) and the library's configs for everything that needs no topic.
type botAPI interface {
	MakeRequest(method string, params tgbotapi.Params) (*tgbotapi.APIResponse, error)
	Request(c tgbotapi.Chattable) (*tgbotapi.APIResponse, error)
	UploadFiles(method string, params tgbotapi.Params, files []tgbotapi.RequestFile) (*tgbotapi.APIResponse, error)
}

// Options are the adapter's collaborators.
type Options struct {
	// Plugins name the /<plugin> commands registered in Telegram's menu.
	Plugins []core.Plugin
	// Clock times the flood-control gate; nil is the system clock.
	Clock  core.Clock
	Logger *slog.Logger
	// HTTPClient makes the Bot API requests; nil is a default client.
	HTTPClient *http.Client
	// Listener, when set, serves the webhook instead of listening on
	// Config.WebhookListen.
	Listener net.Listener
}

// Adapter is the Telegram platform. It is safe for concurrent use.
type Adapter struct {
	core.Health
	format
	cfg      Config
	api      botAPI
	client   *pollClient
	self     string // the bot's username, lower case
	clock    core.Clock
	logger   *slog.Logger
	gate     *gate
	commands []tgbotapi.BotCommand
	listener net.Listener
	secret   string
	choices  *choices

	mu sync.Mutex
	// answered holds the callback queries Refuse answered while the
	// router handled them.
	answered map[string]bool
	// seen are the updates handed on lately, each with a channel closed
	// once it settled: a delivery Telegram repeats settles with the first.
	seen *recent.Map[int, chan struct{}]
}

var (
	_ core.Platform      = (*Adapter)(nil)
	_ core.Typer         = (*Adapter)(nil)
	_ core.ChoiceOfferer = (*Adapter)(nil)
	_ core.Refuser       = (*Adapter)(nil)
)

// New connects to the Bot API (getMe checks the token) and returns the
// adapter. Errors never contain the token.
func New(cfg Config, opts Options) (*Adapter, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		return nil, fmt.Errorf("telegram: TELEGRAM_TOKEN is not set")
	}
	base := opts.HTTPClient
	if base == nil {
		// Long polls last PollTimeout; nothing else should take a minute.
		base = &http.Client{Timeout: cfg.PollTimeout + time.Minute}
	}
	client := &pollClient{base: base}
	bot, err := tgbotapi.NewBotAPIWithClient(string(cfg.Token), cfg.APIEndpoint, client)
	if err != nil {
		return nil, fmt.Errorf("telegram: connect: %w", redact(err, string(cfg.Token)))
	}
	clock := opts.Clock
	if clock == nil {
		clock = core.SystemClock{}
	}
	logger := opts.Logger
	logger = core.OrDiscard(logger)
	secret := string(cfg.WebhookSecret)
	if secret == "" {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		secret = hex.EncodeToString(b)
	}
	return &Adapter{
		format:   format{editInterval: cfg.EditInterval},
		cfg:      cfg,
		api:      bot,
		client:   client,
		self:     strings.ToLower(bot.Self.UserName),
		clock:    clock,
		logger:   logger.With("platform", Name, "bot", bot.Self.UserName),
		gate:     newGate(clock, cfg.GroupWritesPerMinute),
		commands: botCommands(core.NewCommands(opts.Plugins)),
		listener: opts.Listener,
		secret:   secret,
		choices:  newChoices(),
		answered: make(map[string]bool),
		seen:     recent.New[int, chan struct{}](1024),
	}, nil
}

// Name returns "telegram".
func (a *Adapter) Name() string { return Name }

// format is how the adapter writes to Telegram.
type format struct{ editInterval time.Duration }

// NewFormat returns the adapter's format for cfg, without connecting.
func NewFormat(cfg Config) core.Format { return format{editInterval: cfg.withDefaults().EditInterval} }

// Limits allows one write per EditInterval per chat; the group budget and
// flood control are enforced by the adapter's gate, which answers
// *core.RateLimitError.
func (f format) Limits() core.Limits {
	return core.Limits{EditInterval: f.editInterval, ChannelInterval: f.editInterval, ChannelBurst: 1}
}

// Render renders blocks as Telegram HTML messages.
func (format) Render(blocks []core.ResponseBlock) []string {
	return formatter.Telegram(blocks, formatter.TelegramLimit)
}

// hold reads the place to names and takes its chat's turn at the gate,
// or says how long it is held back (a *core.RateLimitError).
func (a *Adapter) hold(to core.Target) (p place, release func(), err error) {
	if p, err = parsePlace(to); err != nil {
		return place{}, nil, err
	}
	release, d := a.gate.acquire(p.chat)
	if d > 0 {
		return place{}, nil, &core.RateLimitError{RetryAfter: d, Err: errHeldBack}
	}
	return p, release, nil
}

// call runs one Bot API request, redacting the token from its error.
func (a *Adapter) call(f func() error) error { return redact(f(), string(a.cfg.Token)) }

// Send posts text (Telegram HTML) in to. It returns *core.RateLimitError
// while the chat is under flood control or over its group budget.
func (a *Adapter) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	p, release, err := a.hold(to)
	if err != nil {
		return core.MessageRef{}, err
	}
	defer release()
	var id int
	err = a.write(p.chat, text, func(text, mode string) (err error) {
		id, err = a.sendMessage(p, text, mode, nil)
		return err
	})
	if err != nil {
		return core.MessageRef{}, fmt.Errorf("telegram: send: %w", err)
	}
	return core.MessageRef{Target: to, ID: strconv.Itoa(id)}, nil
}

// Edit replaces the text of a message the bot sent. Unchanged text is
// success.
func (a *Adapter) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	id, err := strconv.Atoi(ref.ID)
	if err != nil {
		return fmt.Errorf("telegram: bad message id %q", ref.ID)
	}
	p, release, err := a.hold(ref.Target)
	if err != nil {
		return err
	}
	defer release()
	err = a.write(p.chat, text, func(text, mode string) error {
		edit := tgbotapi.NewEditMessageText(p.chat, id, text)
		edit.ParseMode = mode
		edit.DisableWebPagePreview = true
		_, err := a.api.Request(edit)
		return err
	})
	if err != nil {
		return fmt.Errorf("telegram: edit: %w", err)
	}
	return nil
}

var errHeldBack = errors.New("held back by the adapter's flood gate")

// write sends text as HTML through do, and handles Telegram's answers: a
// 429 closes the chat's gate and becomes a *core.RateLimitError; text
// Telegram cannot parse, or finds too long, is sent again as plain text.
func (a *Adapter) write(chat int64, text string, do func(text, mode string) error) error {
	text = strings.ToValidUTF8(text, "\uFFFD")
	err := a.call(func() error { return do(text, tgbotapi.ModeHTML) })
	if isParseError(err) || isTooLong(err) {
		a.logger.Warn("resending as plain text", "chat", chat, "err", err)
		err = a.call(func() error { return do(plainFallback(text), "") })
	}
	switch d, limited := retryAfter(err); {
	case err == nil, isNotModified(err):
		return nil
	case limited:
		a.gate.block(chat, d)
		return &core.RateLimitError{RetryAfter: d, Err: err}
	}
	return err
}

// plainFallback is text without its markup, cut to Telegram's limit.
func plainFallback(html string) string {
	plain := formatter.TelegramPlain(html)
	n := 0
	for i, r := range plain {
		if n += 1 + boolInt(r >= 0x10000); n > formatter.TelegramLimit {
			return plain[:i]
		}
	}
	return plain
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Typing shows the typing indicator; it does nothing while the chat is
// under flood control.
func (a *Adapter) Typing(ctx context.Context, to core.Target) error {
	p, err := parsePlace(to)
	if err != nil {
		return err
	}
	if a.gate.blocked(p.chat) > 0 {
		return nil
	}
	err = a.call(func() error { return a.sendTyping(p) })
	if d, limited := retryAfter(err); limited {
		a.gate.block(p.chat, d)
	}
	if err != nil {
		return fmt.Errorf("telegram: typing: %w", err)
	}
	return nil
}

// errNotPrivate makes the router refuse a message in the chat: only a
// button press has a private answer (an alert).
var errNotPrivate = errors.New("telegram: no private reply for a message")

// Refuse answers a button press by a user who is not allowed with a
// private alert. A message gets errNotPrivate, and so the router's reply,
// which it sends once per place.
func (a *Adapter) Refuse(ctx context.Context, m core.Message, text string) error {
	id, ok := strings.CutPrefix(m.ReplyTo, callbackPrefix)
	if !ok {
		return errNotPrivate
	}
	a.mu.Lock()
	a.answered[id] = true
	a.mu.Unlock()
	return a.answerCallback(id, text, true)
}

// parsePlace reads the chat and topic from a target, and the user's
// message a question replies to (core.Target.Quote): in a muted group a
// reply still notifies its author, a new message does not.
func parsePlace(t core.Target) (place, error) {
	chat, err := strconv.ParseInt(t.Channel, 10, 64)
	if err != nil {
		return place{}, fmt.Errorf("telegram: bad chat id %q", t.Channel)
	}
	p := place{chat: chat}
	if t.Thread != "" {
		if p.thread, err = strconv.Atoi(t.Thread); err != nil {
			return place{}, fmt.Errorf("telegram: bad topic id %q", t.Thread)
		}
	}
	if !strings.HasPrefix(t.ReplyTo, callbackPrefix) { // a press's id names no message
		p.quote, _ = strconv.Atoi(t.Quote)
	}
	return p, nil
}

// reactionEmoji are the emoji each state of a turn shows: a bot may react
// only with Telegram's fixed list, which has no ✅ ❌ ⏳ 🛑 🔁.
var reactionEmoji = map[core.Reaction]string{
	core.ReactionRunning: "👀", core.ReactionWaiting: "🤔", core.ReactionDone: "👍",
	core.ReactionFailed: "👎", core.ReactionStopped: "🙈", core.ReactionLimit: "😴",
}

// React shows state on m, replacing the bot's reaction there
// (core.Reacter). It takes no turn of the chat's write budget, so that
// a reaction never holds a reply back. Flood control is the chat's: a
// reaction waits it out without asking (the router then shows the latest
// state), as a request in it may lengthen it, and a 429 on a reaction
// closes the chat's gate as one on a write does; either is a
// *core.RateLimitError.
func (a *Adapter) React(ctx context.Context, m core.Message, state core.Reaction) error {
	emoji, ok := reactionEmoji[state]
	id, err := strconv.Atoi(m.ID)
	if !ok || err != nil || m.ReplyTo != "" {
		return nil // a button's press: no message of the user's
	}
	p, err := parsePlace(m.Target())
	if err != nil {
		return err
	}
	if d := a.gate.blocked(p.chat); d > 0 {
		return &core.RateLimitError{RetryAfter: d, Err: errHeldBack}
	}
	err = a.call(func() error { return a.setReaction(p, id, emoji) })
	if d, limited := retryAfter(err); limited {
		a.gate.block(p.chat, d) // the chat's flood control holds every write
		return &core.RateLimitError{RetryAfter: d, Err: err}
	}
	return err
}

// Notify sends text as a new message, which notifies where an edit does
// not. A question was just sent as a reply to its author's message, which
// notifies them even in a muted group, so it needs none.
func (a *Adapter) Notify(ctx context.Context, to core.Target, user string, why core.NotifyReason, text string) error {
	if why == core.NotifyQuestion {
		return nil
	}
	pages := a.Render([]core.ResponseBlock{{Kind: core.BlockText, Text: text}})
	if len(pages) == 0 {
		return nil
	}
	for tries := 1; ; tries++ {
		_, err := a.Send(ctx, to, pages[0])
		// No coordinator tries a notification again: one the gate holds
		// back for a moment (a group's budget step) waits for it, a few
		// times, rather than being lost; a longer flood wait still
		// refuses it.
		if rl, held := core.AsRateLimit(err); held && rl.RetryAfter <= notifyWait && tries < 3 {
			if !core.Sleep(ctx, a.clock, rl.RetryAfter) {
				return ctx.Err()
			}
			continue
		}
		return err
	}
}

// notifyWait is the longest a notification waits at the gate: a group's
// budget step at 20 writes a minute.
const notifyWait = 3 * time.Second

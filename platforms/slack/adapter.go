package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/lanes"
	"github.com/jake-bot/jake-bot/core/recent"
	"github.com/jake-bot/jake-bot/formatter"
)

// Name is the platform's name in conversation keys and access lists.
const Name = "slack"

// Compile-time checks of the interfaces the adapter implements.
var (
	_ core.Platform = (*Adapter)(nil)
	_ core.Refuser  = (*Adapter)(nil)
	_ core.Typer    = (*Adapter)(nil)
)

// memory bounds each of the adapter's recent-id sets.
const memory = 10000

// Adapter is the Slack platform. It is safe for concurrent use.
type Adapter struct {
	core.Health
	format
	cfg    Config
	api    webAPI
	sock   socket
	logger *slog.Logger

	// bot is the bot's own user id, learnt from auth.test when Run
	// starts, and mentionRe matches a mention of it.
	bot       string
	mentionRe *regexp.Regexp

	seen *recent.Map[string, struct{}] // envelope, event and message ids handled
	// buttons are the messages posted with buttons: an edit replaces
	// them, so an answered question keeps none.
	buttons  *recent.Map[string, struct{}]
	threads  *recent.Map[string, struct{}] // "channel/ts" of threads that are conversations
	lastUsed *recent.Map[string, string]   // "channel/user" → thread ts that user last used
	reacted  *recent.Map[string, struct{}] // messages already marked as being worked on
	shown    *recent.Map[string, string]   // the reaction React left on each message
	chains   *recent.Map[string, *chain]   // messages split after msg_too_long
	commands *core.Commands
	lookup   core.Lookup
	holds    core.Holds   // threads being opened, until their conversation is registered
	hinted   *core.Spacer // threads told they have no conversation
}

// Options are what the adapter needs from the rest of the bot; each zero
// value is a working default. It never sees the router: it gets a
// core.Handler in Run.
type Options struct {
	// Plugins' commands (core's command table) may come in a mention
	// without a slash.
	Plugins []core.Plugin
	// Lookup answers with the router's policy whether the router serves a
	// user, asked before the adapter posts a thread parent or starts a
	// conversation for them. Nil serves nobody.
	Lookup core.Lookup
	// MessageLimit is the length, in runes, at which a reply continues in
	// a new message; zero is formatter.SlackLimit.
	MessageLimit int
	// Logger logs; nil discards.
	Logger *slog.Logger
}

// New returns an adapter for cfg using slack-go. It fails when cfg does
// not validate; it does not connect until Run.
func New(cfg Config, opts Options) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := newAdapter(cfg, opts)
	c := newClient(a.cfg, a.logger)
	a.api, a.sock = c, c
	return a, nil
}

// newAdapter fills in defaults; the caller sets api and sock.
func newAdapter(cfg Config, opts Options) *Adapter {
	if cfg.APIURL == "" {
		cfg.APIURL = slack.APIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	if cfg.DefaultPlugin == "" {
		cfg.DefaultPlugin = "claude"
	}
	a := &Adapter{
		format:   NewFormat(cfg).(format),
		cfg:      cfg,
		seen:     recent.New[string, struct{}](memory),
		buttons:  recent.New[string, struct{}](memory),
		threads:  recent.New[string, struct{}](memory),
		lastUsed: recent.New[string, string](memory),
		reacted:  recent.New[string, struct{}](memory),
		shown:    recent.New[string, string](memory),
		chains:   recent.New[string, *chain](memory),
		hinted:   core.NewSpacer(memory, hintEvery, nil),
		commands: core.NewCommands(opts.Plugins),
		lookup:   opts.Lookup,
		logger:   core.OrDiscard(opts.Logger).With("platform", Name),
	}
	if a.lookup == nil {
		a.lookup = core.NoLookup{}
	}
	if opts.MessageLimit > 0 {
		a.format.limit = opts.MessageLimit
	}
	return a
}

// admits reports whether the router serves user. The router decides;
// the adapter asks before work the router never sees: a thread parent, a
// conversation started for a mention.
func (a *Adapter) admits(user string) bool {
	return a.lookup.Admits(core.Message{Key: core.ConversationKey{Platform: Name}, From: user})
}

// Name returns "slack".
func (a *Adapter) Name() string { return Name }

// format is how the adapter writes to Slack.
type format struct {
	editInterval time.Duration
	limit        int // runes in a message
}

// NewFormat returns the adapter's format for cfg, without connecting.
func NewFormat(cfg Config) core.Format {
	return format{editInterval: cmp.Or(cfg.EditInterval, time.Second), limit: formatter.SlackLimit}
}

// Limits returns the configured edit interval. Slack's per-channel posting
// limit is left to its 429s, which the coordinator waits out per reply.
func (f format) Limits() core.Limits { return core.Limits{EditInterval: f.editInterval} }

// Render renders blocks as mrkdwn pages of at most the message limit.
func (f format) Render(blocks []core.ResponseBlock) []string { return formatter.Slack(blocks, f.limit) }

// Send posts text in to's thread (or channel, for a direct message). A
// text Slack refuses as too long is split over several messages; the ref
// names the first.
func (a *Adapter) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	ts, err := a.post(ctx, to, text)
	if slackError(err) == errTooLong {
		ts, err = a.writeSplit(ctx, to, "", text)
	}
	return core.MessageRef{Target: to, ID: ts}, translate("chat.postMessage", err)
}

// Edit replaces the text of a message the bot posted, keeping the
// continuation messages of one it had to split up to date.
func (a *Adapter) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	if _, split := a.chains.Get(ref.Target.Channel + "/" + ref.ID); split {
		_, err := a.writeSplit(ctx, ref.Target, ref.ID, text)
		return translate("chat.update", err)
	}
	err := a.update(ctx, ref.Target.Channel, ref.ID, text)
	if slackError(err) == errTooLong {
		_, err = a.writeSplit(ctx, ref.Target, ref.ID, text)
	}
	return translate("chat.update", err)
}

func (a *Adapter) post(ctx context.Context, to core.Target, text string) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionDisableLinkUnfurl()}
	if to.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(to.Thread))
	}
	_, ts, err := a.api.PostMessageContext(ctx, to.Channel, opts...)
	return ts, err
}

func (a *Adapter) update(ctx context.Context, channel, ts, text string) error {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if _, ok := a.buttons.Get(channel + "/" + ts); ok && utf8.RuneCountInString(text) <= maxSectionText {
		// Replacing the blocks removes the buttons.
		opts = append(opts, slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)))
	}
	_, _, _, err := a.api.UpdateMessageContext(ctx, channel, ts, opts...)
	return err
}

// Refuse tells m's author privately, with an ephemeral message, that they
// may not use the bot.
func (a *Adapter) Refuse(ctx context.Context, m core.Message, text string) error {
	opts := []slack.MsgOption{slack.MsgOptionText(formatter.SlackEscape(text), false)}
	if m.Key.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(m.Key.Thread))
	}
	_, err := a.api.PostEphemeralContext(ctx, m.Key.Channel, m.Author(), opts...)
	return translate("chat.postEphemeral", err)
}

// Typing marks the message a turn answers with an 👀 reaction, once:
// Slack has no typing indicator for bots. The router calls it repeatedly
// while the turn runs.
func (a *Adapter) Typing(ctx context.Context, to core.Target) error {
	if to.ReplyTo == "" || !a.reacted.Add(to.Channel+"/"+to.ReplyTo, struct{}{}) {
		return nil
	}
	err := a.api.AddReactionContext(ctx, "eyes", slack.ItemRef{Channel: to.Channel, Timestamp: to.ReplyTo})
	if slackError(err) == errAlreadyReacted {
		return nil
	}
	return translate("reactions.add", err)
}

// reactionNames are the emoji each state of a turn shows (Slack takes any).
var reactionNames = map[core.Reaction]string{
	core.ReactionRunning: "eyes", core.ReactionWaiting: "hourglass_flowing_sand", core.ReactionDone: "white_check_mark",
	core.ReactionFailed: "x", core.ReactionStopped: "octagonal_sign", core.ReactionLimit: "repeat",
}

// React shows state on m (core.Reacter): its emoji is added, then the one
// shown before (Typing's 👀 at first) removed, so that the message always
// shows one. Tried again after a 429, each step that was done is a no-op.
func (a *Adapter) React(ctx context.Context, m core.Message, state core.Reaction) error {
	to := m.Target()
	name, ok := reactionNames[state]
	if to.ReplyTo == "" || !ok {
		return nil // a slash command or a button: no message of the user's
	}
	item, key := slack.ItemRef{Channel: to.Channel, Timestamp: to.ReplyTo}, to.Channel+"/"+to.ReplyTo
	if err := a.api.AddReactionContext(ctx, name, item); err != nil && slackError(err) != errAlreadyReacted {
		return translate("reactions.add", err)
	}
	prev, ok := a.shown.Get(key)
	if !ok {
		prev = reactionNames[core.ReactionRunning]
	}
	if prev != name {
		if err := a.api.RemoveReactionContext(ctx, prev, item); err != nil && slackError(err) != errNoReaction {
			return translate("reactions.remove", err)
		}
	}
	a.shown.Set(key, name)
	return nil
}

// Run connects over Socket Mode and passes every message to h until ctx
// is cancelled, then waits for the handlers it started. It returns an
// error when Slack refuses the tokens.
func (a *Adapter) Run(ctx context.Context, h core.Handler) error {
	auth, err := a.api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack auth.test: %w", err)
	}
	a.setBot(auth.UserID)
	a.logger.Info("connecting", "bot_user", auth.UserID, "team", auth.Team, "config", a.cfg)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.sock.RunContext(runCtx) }()
	var work lanes.PerKey[string]
	defer work.Close()
	for {
		select {
		case <-ctx.Done():
			<-done
			return nil
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slack socket mode: %w", err)
		case ev := <-a.sock.Events():
			a.onEvent(ctx, ev, h, &work)
		}
	}
}

func (a *Adapter) setBot(user string) {
	a.bot = user
	a.mentionRe = regexp.MustCompile(`<@` + regexp.QuoteMeta(user) + `(\|[^>]*)?>`)
}

// onEvent acknowledges an envelope at once, then hands its message to the
// thread's worker.
func (a *Adapter) onEvent(ctx context.Context, ev socketmode.Event, h core.Handler, work *lanes.PerKey[string]) {
	switch ev.Type {
	case socketmode.EventTypeConnected:
		a.logger.Info("connected")
		a.Set(nil)
		return
	case socketmode.EventTypeConnectionError:
		a.logger.Warn("socket mode", "event", string(ev.Type), "detail", fmt.Sprint(ev.Data))
		a.Set(fmt.Errorf("socket mode: %v", ev.Data))
		return
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed, socketmode.EventTypeErrorBadMessage:
		a.logger.Warn("socket mode", "event", string(ev.Type), "detail", fmt.Sprint(ev.Data))
		return
	case socketmode.EventTypeInvalidAuth:
		a.logger.Error("slack refused the app token")
		a.Set(errors.New("slack refused the app token"))
		return
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
	default:
		a.logger.Debug("socket mode", "event", string(ev.Type))
		return
	}
	if ev.Request == nil {
		return
	}
	if err := a.sock.Ack(*ev.Request); err != nil {
		a.logger.Warn("ack", "envelope", ev.Request.EnvelopeID, "err", err)
	}
	if !a.seen.Add("envelope:"+ev.Request.EnvelopeID, struct{}{}) {
		a.logger.Debug("dropped a redelivered envelope", "envelope", ev.Request.EnvelopeID, "retry", ev.Request.RetryAttempt)
		return
	}
	in, ok := a.inbound(ev)
	if !ok {
		return
	}
	work.Do(in.queue, func() { a.deliver(ctx, in, h) })
}

// Notify posts text in to's thread with an @mention of user: Slack does
// not notify for a thread reply the user has not followed, nor for edits.
func (a *Adapter) Notify(ctx context.Context, to core.Target, user string, why core.NotifyReason, text string) error {
	pages := a.Render([]core.ResponseBlock{{Kind: core.BlockText, Text: text}})
	if len(pages) == 0 {
		return nil
	}
	_, err := a.post(ctx, to, "<@"+user+"> "+pages[0])
	return translate("chat.postMessage", err)
}

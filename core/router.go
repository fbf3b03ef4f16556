package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// Reasons a turn's context is cancelled; the user is told which one fired.
var (
	ErrStopped     = errors.New("stopped by /stop")
	ErrTurnTimeout = errors.New("turn timed out")
	ErrShutdown    = errors.New("the bot is shutting down")
)

// RouterConfig holds the router's settings.
type RouterConfig struct {
	Plugins *Registry
	Access  *Access
	Roots   Roots
	// DefaultWorkdir is where /start without a path begins; empty means
	// the first root.
	DefaultWorkdir string
	// TurnTimeout bounds one turn; zero means 30 minutes.
	TurnTimeout time.Duration
	// QueueLimit is how many messages may wait behind a running turn;
	// zero means 5.
	QueueLimit int
	Clock      Clock
	Logger     *slog.Logger
}

// Router routes messages from every platform to commands and turns. It is
// safe for concurrent use.
type Router struct {
	cfg    RouterConfig
	convs  *Conversations
	logger *slog.Logger
	clock  Clock

	// turnCtx is the parent of every turn; cancelling it (shutdown) kills
	// every running CLI. Replies are delivered under a context that
	// outlives it, so the chat still learns what happened.
	turnCtx    context.Context
	cancelAll  context.CancelCauseFunc
	deliverCtx context.Context

	mu        sync.Mutex
	platforms map[string]*attached
	queues    map[ConversationKey]*turnQueue
	wg        sync.WaitGroup
}

type attached struct {
	p     Platform
	coord *StreamCoordinator
}

// turnQueue exists only while a conversation has a turn running.
type turnQueue struct {
	pending []Message
	cancel  context.CancelCauseFunc
}

// NewRouter returns a router. ctx is the bot's lifetime: when it ends,
// running turns are cancelled.
func NewRouter(ctx context.Context, cfg RouterConfig, convs *Conversations) *Router {
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = 30 * time.Minute
	}
	if cfg.QueueLimit <= 0 {
		cfg.QueueLimit = 5
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Access == nil {
		cfg.Access = NewAccess()
	}
	if convs == nil {
		convs = NewConversations()
	}
	turnCtx, cancel := context.WithCancelCause(ctx)
	return &Router{
		cfg:        cfg,
		convs:      convs,
		logger:     orDiscard(cfg.Logger),
		clock:      cfg.Clock,
		turnCtx:    turnCtx,
		cancelAll:  cancel,
		deliverCtx: context.WithoutCancel(ctx),
		platforms:  make(map[string]*attached),
		queues:     make(map[ConversationKey]*turnQueue),
	}
}

// Conversations returns the router's conversation map.
func (r *Router) Conversations() *Conversations { return r.convs }

// Attach registers a platform and returns the handler to pass to its Run.
func (r *Router) Attach(p Platform) Handler {
	a := &attached{p: p, coord: NewStreamCoordinator(p, r.clock, r.logger.With("platform", p.Name()))}
	r.mu.Lock()
	r.platforms[p.Name()] = a
	r.mu.Unlock()
	return func(ctx context.Context, m Message) { r.Handle(ctx, a, m) }
}

// Shutdown cancels every running turn with ErrShutdown.
func (r *Router) Shutdown() { r.cancelAll(ErrShutdown) }

// Wait blocks until no turn is running or queued.
func (r *Router) Wait() { r.wg.Wait() }

// Handle routes one message from platform a.
func (r *Router) Handle(ctx context.Context, a *attached, m Message) {
	if !m.Allowed && !r.cfg.Access.Allowed(m.Key.Platform, m.Author()) {
		r.logger.Warn("refused user", "platform", m.Key.Platform, "user", m.Author())
		if rf, ok := a.p.(Refuser); ok {
			if err := rf.Refuse(ctx, m, Refusal(m)); err == nil {
				return
			}
		}
		r.reply(a, m.Target(), Refusal(m))
		return
	}
	if IsCommand(m.Text) {
		r.command(ctx, a, m)
		return
	}
	if _, ok := r.convs.Get(m.Key); !ok {
		r.reply(a, m.Target(), r.noConversation())
		return
	}
	r.enqueue(a, m)
}

func (r *Router) noConversation() string {
	ids := r.cfg.Plugins.IDs()
	if len(ids) == 0 {
		return "No conversation here, and no plugins are configured."
	}
	return fmt.Sprintf("No conversation here yet. Start one with /%s start [workdir] (plugins: %s), or /help.", ids[0], joinIDs(ids))
}

// enqueue runs m now, or queues it behind the running turn.
func (r *Router) enqueue(a *attached, m Message) {
	r.mu.Lock()
	q, running := r.queues[m.Key]
	if running {
		if len(q.pending) >= r.cfg.QueueLimit {
			r.mu.Unlock()
			r.reply(a, m.Target(), fmt.Sprintf("A turn is running and %d messages are waiting; this one was not queued. Wait, or /stop.", len(q.pending)))
			return
		}
		q.pending = append(q.pending, m)
		n := len(q.pending)
		r.mu.Unlock()
		r.reply(a, m.Target(), fmt.Sprintf("Queued (%d waiting): it runs when the current turn ends.", n))
		return
	}
	q = &turnQueue{}
	r.queues[m.Key] = q
	r.wg.Add(1)
	r.mu.Unlock()
	go r.drain(a, m)
}

// drain runs m and then every message queued behind it, one at a time.
// A turn's conversation is released before its final reply is delivered,
// so a message sent after seeing the reply is never told to wait.
func (r *Router) drain(a *attached, m Message) {
	defer r.wg.Done()
	for {
		deliver := r.runTurn(a, m)
		r.mu.Lock()
		q := r.queues[m.Key]
		if len(q.pending) == 0 || r.turnCtx.Err() != nil {
			delete(r.queues, m.Key)
			r.mu.Unlock()
			deliver()
			return
		}
		m, q.pending = q.pending[0], q.pending[1:]
		r.mu.Unlock()
		deliver()
	}
}

// stop cancels the running turn of k and drops its queue. It returns how
// many queued messages were dropped and whether a turn was running.
func (r *Router) stop(k ConversationKey) (dropped int, running bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q, ok := r.queues[k]
	if !ok {
		return 0, false
	}
	dropped = len(q.pending)
	q.pending = nil
	if q.cancel != nil {
		q.cancel(ErrStopped)
	}
	return dropped, true
}

// runTurn runs one turn and returns the function that delivers its final
// reply.
func (r *Router) runTurn(a *attached, m Message) (deliver func()) {
	conv, ok := r.convs.Get(m.Key)
	if !ok {
		return func() { r.reply(a, m.Target(), "The conversation ended before this message's turn; it was not sent.") }
	}
	plugin, ok := r.cfg.Plugins.Get(conv.Plugin)
	if !ok {
		return func() {
			r.reply(a, m.Target(), fmt.Sprintf("Plugin %q is no longer configured. Start a new conversation.", conv.Plugin))
		}
	}
	ctx, cancel := context.WithCancelCause(r.turnCtx)
	defer cancel(nil)
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, r.cfg.TurnTimeout, ErrTurnTimeout)
	defer cancelTimeout()
	r.mu.Lock()
	r.queues[m.Key].cancel = cancel
	r.mu.Unlock()

	logger := r.logger.With("conversation", m.Key.String(), "plugin", plugin.ID())
	reply := a.coord.NewReply(r.deliverCtx, m.Target())
	stopTyping := r.typing(ctx, a.p, m.Target())
	started := r.clock.Now()
	token := conv.ResumeToken

	res, err := r.runPlugin(ctx, plugin, Turn{Key: m.Key, Workdir: conv.Workdir, Prompt: m.Text, ResumeToken: conv.ResumeToken},
		func(ev Event) {
			if ev.Kind == EventSession && ev.ResumeToken != "" {
				token = ev.ResumeToken
			}
			reply.Emit(ev)
		})
	stopTyping()
	if res.ResumeToken != "" {
		token = res.ResumeToken
	}
	r.convs.Update(m.Key, func(c *Conversation) {
		// A /start or /resume during the turn made a new conversation;
		// this turn's token belongs to the old one.
		if c.Started.Equal(conv.Started) && c.Plugin == conv.Plugin {
			c.ResumeToken = token
			c.LastUsed = r.clock.Now()
		}
	})

	outcome := "ok"
	switch {
	case ctx.Err() != nil:
		cause := context.Cause(ctx)
		outcome = "cancelled"
		reply.Add(ResponseBlock{Kind: BlockError, Text: cancelMessage(cause, r.cfg.TurnTimeout, plugin)})
	case err != nil:
		outcome = "error"
		logger.Warn("turn failed", "err", err)
		reply.Add(ResponseBlock{Kind: BlockError, Text: UserMessage(err)})
	case res.IsError:
		outcome = "error"
	}
	if res.Duration == 0 {
		res.Duration = r.clock.Now().Sub(started)
	}
	reply.Add(ResponseBlock{Kind: BlockFooter, Duration: res.Duration, CostUSD: res.CostUSD})
	logger.Info("turn", "outcome", outcome, "duration", res.Duration, "cost_usd", res.CostUSD, "resume_token", token)
	return func() { reply.Close(r.deliverCtx) }
}

// runPlugin runs the plugin, turning a panic into an error so that one bad
// turn cannot take the bot down.
func (r *Router) runPlugin(ctx context.Context, p Plugin, t Turn, emit func(Event)) (res TurnResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			r.logger.Error("plugin panicked", "plugin", p.ID(), "panic", v, "stack", string(debug.Stack()))
			err = &UserError{Msg: fmt.Sprintf("internal error: the %s plugin crashed (%v)", p.Name(), v)}
		}
	}()
	return p.Run(ctx, t, emit)
}

func cancelMessage(cause error, timeout time.Duration, p Plugin) string {
	switch {
	case errors.Is(cause, ErrStopped):
		return "Stopped. The conversation continues with your next message."
	case errors.Is(cause, ErrTurnTimeout):
		return fmt.Sprintf("The turn took longer than %s and was stopped.", timeout)
	case errors.Is(cause, ErrShutdown):
		return fmt.Sprintf("The bot is restarting; this turn was stopped. Send your message again once it is back (/%s resume continues this session).", p.ID())
	}
	return "The turn was cancelled: " + cause.Error()
}

// typing shows the platform's typing indicator until the returned func is
// called.
func (r *Router) typing(ctx context.Context, p Platform, to Target) (stop func()) {
	t, ok := p.(Typer)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(typingInterval)
		defer tick.Stop()
		for {
			if err := t.Typing(ctx, to); err != nil {
				r.logger.Debug("typing", "err", err)
			}
			select {
			case <-tick.C:
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return sync.OnceFunc(func() { close(done) })
}

// typingInterval is below the shortest indicator lifetime (Telegram's 5 s).
const typingInterval = 4 * time.Second

// reply renders text as one text block and sends it, waiting for delivery.
func (r *Router) reply(a *attached, to Target, text string) {
	rep := a.coord.NewReply(r.deliverCtx, to)
	rep.Add(ResponseBlock{Kind: BlockText, Text: text})
	rep.Close(r.deliverCtx)
}

// replyError sends an error block.
func (r *Router) replyError(a *attached, to Target, err error) {
	rep := a.coord.NewReply(r.deliverCtx, to)
	rep.Add(ResponseBlock{Kind: BlockError, Text: UserMessage(err)})
	rep.Close(r.deliverCtx)
}

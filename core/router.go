package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Reasons a turn's context is cancelled; the user is told which one fired.
var (
	ErrStopped     = errors.New("stopped by /stop")
	ErrTurnTimeout = errors.New("turn timed out")
	ErrIdleTimeout = errors.New("turn produced no output for too long")
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
	// IdleTimeout stops a turn whose plugin emitted no event for that
	// long; zero means 10 minutes, negative means never. Like TurnTimeout
	// it runs on real time, not on Clock.
	IdleTimeout time.Duration
	// QueueLimit is how many messages may wait behind a running turn;
	// zero means 5.
	QueueLimit int
	// MaxRunningTurns bounds the turns running at once in the whole bot,
	// and MaxUserTurns those of one user; zero means no limit. A turn
	// beyond them waits in line, and its chat is told its place.
	MaxRunningTurns int
	MaxUserTurns    int
	// UserRate limits how many messages each user other than an admin may
	// send; the zero Rate means no limit.
	UserRate Rate
	// MaxMessageBytes is the longest message passed to a plugin; zero
	// means 100,000 bytes (a CLI gets the message as one argument, and
	// Linux caps one argument at 128 KiB).
	MaxMessageBytes int
	// Observer, when set, is told about every command, turn and delivery.
	Observer Observer
	// StopDeadline bounds how long Drain waits for cancelled turns to
	// end; zero means 15 seconds. It runs on real time.
	StopDeadline time.Duration
	// Ask lets plugins ask the chat before a tool runs (APPROVALS=ask);
	// ApprovalTimeout denies a question nobody answered, zero meaning
	// DefaultApprovalTimeout. Like TurnTimeout it runs on real time.
	Ask             bool
	ApprovalTimeout time.Duration
	// Redactor blanks the bot's secrets out of everything sent to a chat,
	// whatever a CLI printed.
	Redactor *Redactor
	Clock    Clock
	Logger   *slog.Logger
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

	limits      *userLimits
	refused     *Recent[string, struct{}]
	slots       *turnSlots
	questions   questions
	obs         Observer
	defaultRoot string

	mu        sync.Mutex
	platforms map[string]*attached
	queues    map[ConversationKey]*turnQueue
	wg        sync.WaitGroup
	// draining is set once shutdown began: no new turn starts.
	draining bool
}

type attached struct {
	p     Platform
	coord *StreamCoordinator
}

// turnQueue exists only while a conversation has a turn running.
type turnQueue struct {
	a       *attached
	target  Target
	pending []queued
	cancel  context.CancelCauseFunc
	// plugin and token of the running turn, for the shutdown notice.
	plugin string
	token  string
	// held are the Done of answers to the running turn's questions,
	// called once the turn is delivered.
	held []func()
}

// queued is a message waiting for its turn, with its correlation id and
// the conversation it was written to: a message belongs to the
// conversation it was sent in, whatever happens to the chat meanwhile.
type queued struct {
	m    Message
	id   string
	conv Conversation
	// done is m's Done, called once the message is delivered or dropped.
	done func()
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
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 10 * time.Minute
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 100_000
	}
	if cfg.StopDeadline <= 0 {
		cfg.StopDeadline = 15 * time.Second
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = DefaultApprovalTimeout
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
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
		cfg:         cfg,
		limits:      newUserLimits(cfg.UserRate),
		refused:     NewRecent[string, struct{}](10_000),
		slots:       newTurnSlots(cfg.MaxRunningTurns, cfg.MaxUserTurns),
		obs:         cfg.Observer,
		defaultRoot: defaultRoot(cfg.Roots, cfg.DefaultWorkdir),
		convs:       convs,
		logger:      orDiscard(cfg.Logger),
		clock:       cfg.Clock,
		turnCtx:     turnCtx,
		cancelAll:   cancel,
		deliverCtx:  context.WithoutCancel(ctx),
		platforms:   make(map[string]*attached),
		queues:      make(map[ConversationKey]*turnQueue),
	}
}

// Conversations returns the router's conversation map.
func (r *Router) Conversations() *Conversations { return r.convs }

// Attach registers a platform and returns the handler to pass to its Run.
func (r *Router) Attach(p Platform) Handler {
	a := &attached{p: p, coord: NewStreamCoordinator(p, r.clock, r.logger.With("platform", p.Name()))}
	a.coord.obs = r.obs
	a.coord.redact = r.cfg.Redactor
	r.mu.Lock()
	r.platforms[p.Name()] = a
	r.mu.Unlock()
	return func(ctx context.Context, m Message) { r.Handle(ctx, a, m) }
}

// Shutdown cancels every running turn with ErrShutdown.
func (r *Router) Shutdown() { r.cancelAll(ErrShutdown) }

// Wait blocks until no turn is running or queued.
func (r *Router) Wait() { r.wg.Wait() }

// Stats returns a snapshot of the router's load.
func (r *Router) Stats() Stats {
	r.mu.Lock()
	st := Stats{Running: len(r.queues)}
	for _, q := range r.queues {
		st.Queued += len(q.pending)
	}
	r.mu.Unlock()
	// A turn waiting for a slot is not running yet.
	waiting := r.slots.waitingCount()
	st.Running, st.Queued = max(0, st.Running-waiting), st.Queued+waiting
	st.Conversations = r.convs.Len()
	return st
}

// Drain shuts the router down gently: no new turn starts, every chat with
// a running turn is told that the bot is restarting and how to continue,
// messages still queued are answered instead of run, and running turns get
// grace (on the router's clock) to finish before they are cancelled with
// ErrShutdown. Drain returns once every turn has ended and its final reply
// is delivered.
func (r *Router) Drain(grace time.Duration) {
	r.mu.Lock()
	r.draining = true
	type notice struct {
		a    *attached
		to   Target
		text string
	}
	var notices []notice
	var droppedMsgs []queued
	for _, q := range r.queues {
		dropped := len(q.pending)
		droppedMsgs = append(droppedMsgs, q.pending...)
		q.pending = nil
		notices = append(notices, notice{q.a, q.target, restartNotice(grace, q.plugin, q.token, dropped)})
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range notices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.reply(n.a, n.to, n.text)
		}()
	}
	wg.Wait()
	finishAll(droppedMsgs)
	r.logger.Info("draining", "running_turns", len(notices), "grace", grace)

	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	expired := make(chan struct{})
	t := r.clock.AfterFunc(grace, func() { close(expired) })
	defer t.Stop()
	select {
	case <-done:
		return
	case <-expired:
	}
	r.cancelAll(ErrShutdown)
	// A turn that does not end once cancelled (a plugin that ignores its
	// context) must not keep the bot from exiting.
	select {
	case <-done:
	case <-time.After(r.cfg.StopDeadline):
		r.logger.Error("turns still running after being cancelled; shutting down without them", "deadline", r.cfg.StopDeadline)
	}
}

func restartNotice(grace time.Duration, plugin, token string, dropped int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The bot is restarting. The running turn has %s to finish; if it is cut short, send your message again once the bot is back.", grace)
	if token != "" {
		fmt.Fprintf(&b, " The conversation continues by itself if the bot keeps its state; otherwise /%s resume %s brings it back.", plugin, token)
	}
	if dropped > 0 {
		fmt.Fprintf(&b, " %d queued messages were not run; send them again later.", dropped)
	}
	return b.String()
}

// Handle routes one message from platform a. A panic while handling it is
// recovered, logged with its stack and reported to the message's chat; no
// other conversation is affected.
func (r *Router) Handle(ctx context.Context, a *attached, m Message) {
	id := newID()
	// Deferred first so that it runs last, after a panic's reply.
	done, queuedTurn := m.finisher(), false
	defer func() {
		if !queuedTurn {
			done()
		}
	}()
	defer r.recoverHandling(a, m, id)
	rec := Record{ID: id, Time: r.clock.Now(), Key: m.Key, Author: m.Author(), Text: m.Text}
	if !m.Allowed && !r.cfg.Access.Allowed(m.Key.Platform, m.Author()) {
		r.logger.Warn("refused user", "id", id, "platform", m.Key.Platform, "user", m.Author())
		rec.Kind, rec.Outcome = RecordRefused, OutcomeError
		r.obs.Record(rec)
		if rf, ok := a.p.(Refuser); ok {
			if err := rf.Refuse(ctx, m, Refusal(m)); err == nil {
				return
			}
		}
		// In the open, a stranger is told once per place: they must not
		// be able to make the bot answer every line they write.
		if r.refused.Add(m.Key.Platform+"/"+m.Author()+"/"+m.Key.Channel+"/"+m.Key.Thread, struct{}{}) {
			r.reply(a, m.Target(), Refusal(m))
		}
		return
	}
	// Admins are trusted with the host already (any root, every
	// conversation); the limit guards against everyone else. It also
	// spares a scripted console, whose one user is an admin.
	if wait := r.limits.take(m.Key.Platform, m.Author(), rec.Time); wait > 0 && !r.cfg.Access.IsAdmin(m.Key.Platform, m.Author()) {
		r.logger.Info("rate limited", "id", id, "conversation", m.Key.String(), "retry_after", wait)
		rec.Kind, rec.Outcome = RecordLimited, OutcomeError
		r.obs.Record(rec)
		r.replyError(a, m.Target(), Errorf("you are sending messages faster than this bot allows (%s). Try again in %s; this message was not sent.", r.cfg.UserRate, roundUp(wait)))
		return
	}
	text, err := r.checkText(m.Text)
	if err != nil {
		rec.Kind, rec.Outcome = RecordRejected, OutcomeError
		r.obs.Record(rec)
		r.replyError(a, m.Target(), err)
		return
	}
	m.Text = text
	if IsCommand(m.Text) {
		queuedTurn = r.command(ctx, a, m, id, done)
		return
	}
	if r.tryAnswer(a, m, "", parseAnswer(m.Text), done) {
		queuedTurn = true // the answer holds done
		return
	}
	conv, ok := r.convs.Get(m.Key)
	if !ok {
		r.reply(a, m.Target(), r.noConversation())
		return
	}
	queuedTurn = r.enqueue(a, queued{m: m, id: id, conv: conv, done: done})
}

// checkText refuses what cannot reach a CLI as an argument and repairs
// what can: invalid UTF-8 becomes U+FFFD.
func (r *Router) checkText(s string) (string, error) {
	if len(s) > r.cfg.MaxMessageBytes {
		return "", Errorf("your message is %d bytes; the limit is %d. Put long text in a file in the workdir and point to it", len(s), r.cfg.MaxMessageBytes)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", Errorf("your message contains NUL bytes, which cannot be passed to a CLI; remove them and send it again")
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, nil
}

// roundUp rounds d up to whole seconds, so "try again in" is never early.
func roundUp(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// recoverHandling turns a panic in handling m into a logged error and a
// reply, so one bad message cannot take the platform's loop down.
func (r *Router) recoverHandling(a *attached, m Message, id string) {
	v := recover()
	if v == nil {
		return
	}
	r.logger.Error("panic while handling a message", "id", id, "conversation", m.Key.String(), "panic", v, "stack", string(debug.Stack()))
	r.obs.Record(Record{Kind: RecordCommand, ID: id, Time: r.clock.Now(), Key: m.Key, Author: m.Author(), Outcome: OutcomePanic})
	r.replyError(a, m.Target(), &UserError{Msg: fmt.Sprintf("internal error: handling your message crashed (%v). It is logged as %s; other conversations are not affected.", v, id)})
}

func (r *Router) noConversation() string {
	ids := r.cfg.Plugins.IDs()
	if len(ids) == 0 {
		return "No conversation here, and no plugins are configured."
	}
	return fmt.Sprintf("No conversation here yet. Start one with /%s start [workdir] (plugins: %s), or /help.", ids[0], joinIDs(ids))
}

// enqueue runs m now, or queues it behind the running turn. It reports
// whether m was taken (its done is then called once its turn is over or it
// is dropped); a message refused here is answered at once.
func (r *Router) enqueue(a *attached, m queued) bool {
	r.mu.Lock()
	if r.draining {
		r.mu.Unlock()
		r.obs.Record(Record{Kind: RecordRejected, ID: m.id, Time: r.clock.Now(), Key: m.m.Key, Author: m.m.Author(), Outcome: OutcomeShutdown, Text: m.m.Text})
		r.reply(a, m.m.Target(), "The bot is restarting and starts no new turns; this message was not sent. Send it again in a minute: the conversation continues.")
		return false
	}
	q, running := r.queues[m.m.Key]
	if running {
		if len(q.pending) >= r.cfg.QueueLimit {
			r.mu.Unlock()
			r.reply(a, m.m.Target(), fmt.Sprintf("A turn is running and %d messages are waiting; this one was not queued. Wait, or /stop.", len(q.pending)))
			return false
		}
		q.pending = append(q.pending, m)
		n := len(q.pending)
		r.mu.Unlock()
		r.reply(a, m.m.Target(), fmt.Sprintf("Queued (%d waiting): it runs when the current turn ends.", n))
		return true
	}
	q = &turnQueue{a: a, target: m.m.Target(), plugin: m.conv.Plugin}
	r.queues[m.m.Key] = q
	r.wg.Add(1)
	r.mu.Unlock()
	go r.drain(a, m)
	return true
}

// finish calls every function in fs.
func finish(fs []func()) {
	for _, f := range fs {
		f()
	}
}

// finishAll calls done of every message in ms.
func finishAll(ms []queued) {
	for _, m := range ms {
		m.done()
	}
}

// drain runs m and then every message queued behind it, one at a time.
// A turn's conversation is released before its final reply is delivered,
// so a message sent after seeing the reply is never told to wait.
func (r *Router) drain(a *attached, m queued) {
	defer r.wg.Done()
	key := m.m.Key
	for {
		deliver := r.runTurn(a, m)
		r.mu.Lock()
		q := r.queues[key]
		if len(q.pending) == 0 || r.turnCtx.Err() != nil || r.draining {
			dropped := q.pending
			delete(r.queues, key)
			held := q.held
			r.mu.Unlock()
			deliver()
			m.done()
			finish(held)
			if len(dropped) > 0 {
				r.reply(a, m.m.Target(), fmt.Sprintf("The bot is restarting: %d queued messages were not run. Send them again once it is back.", len(dropped)))
				finishAll(dropped)
			}
			return
		}
		next := q.pending[0]
		q.pending = q.pending[1:]
		held := q.held
		q.held = nil
		r.mu.Unlock()
		deliver()
		m.done()
		finish(held)
		m = next
	}
}

// stop cancels the running turn of k and drops its queue. It returns how
// many queued messages were dropped and whether a turn was running.
func (r *Router) stop(k ConversationKey) (dropped int, running bool) {
	r.mu.Lock()
	q, ok := r.queues[k]
	if !ok {
		r.mu.Unlock()
		return 0, false
	}
	pending := q.pending
	q.pending = nil
	if q.cancel != nil {
		q.cancel(ErrStopped)
	}
	r.mu.Unlock()
	finishAll(pending)
	return len(pending), true
}

// busy returns why k's conversation cannot be changed now (a turn running
// or messages waiting: changing it would move them), or "".
func (r *Router) busy(k ConversationKey) string {
	r.mu.Lock()
	q, ok := r.queues[k]
	var plugin string
	var waiting int
	if ok {
		plugin, waiting = q.plugin, len(q.pending)
	}
	r.mu.Unlock()
	if !ok {
		return ""
	}
	name := plugin
	if p, found := r.cfg.Plugins.Get(plugin); found {
		name = p.Name()
	}
	msg := fmt.Sprintf("A %s turn is running", name)
	if waiting > 0 {
		msg += fmt.Sprintf(" and %d messages are waiting", waiting)
	}
	return msg + "; /stop it first, or wait until it ends."
}

// runTurn runs one turn and returns the function that delivers its final
// reply. A panic outside the plugin (which runPlugin already guards) is
// recovered here, so the conversation's queue is always released.
func (r *Router) runTurn(a *attached, qm queued) (deliver func()) {
	m := qm.m
	defer func() {
		if v := recover(); v != nil {
			r.logger.Error("panic while running a turn", "id", qm.id, "conversation", m.Key.String(), "panic", v, "stack", string(debug.Stack()))
			r.obs.Record(Record{Kind: RecordTurn, ID: qm.id, Time: r.clock.Now(), Key: m.Key, Author: m.Author(), Outcome: OutcomePanic})
			deliver = func() {
				r.replyError(a, m.Target(), &UserError{Msg: fmt.Sprintf("internal error: this turn crashed (%v). It is logged as %s.", v, qm.id)})
			}
		}
	}()
	// The conversation as it is now (the turn before this one may have
	// given it a new session), provided it is still the one m was written to.
	conv, ok := r.convs.Get(m.Key)
	if !ok || !conv.Started.Equal(qm.conv.Started) || conv.Plugin != qm.conv.Plugin {
		return func() {
			r.reply(a, m.Target(), "The conversation this message was written to ended before its turn; it was not sent.")
		}
	}
	plugin, ok := r.cfg.Plugins.Get(conv.Plugin)
	if !ok {
		return func() {
			r.reply(a, m.Target(), fmt.Sprintf("Plugin %q is no longer configured. Start a new conversation.", conv.Plugin))
		}
	}
	workdir, err := r.conversationWorkdir(m, conv.Workdir)
	if err != nil {
		r.logger.Warn("turn refused by the workdir policy", "id", qm.id, "conversation", m.Key.String(), "user", m.Author(), "err", err)
		return func() { r.replyError(a, m.Target(), err) }
	}
	ctx, cancel := context.WithCancelCause(r.turnCtx)
	defer cancel(nil)
	r.mu.Lock()
	q := r.queues[m.Key]
	q.cancel, q.plugin, q.token = cancel, plugin.ID(), conv.ResumeToken
	r.mu.Unlock()
	user := m.Key.Platform + "/" + m.Author()
	if err := r.slots.acquire(ctx, user, func(place int) {
		r.reply(a, m.Target(), fmt.Sprintf("The bot is running as many turns as it may; this one is number %d in line and starts when another ends (/stop to drop it).", place))
	}); err != nil {
		return func() {
			r.reply(a, m.Target(), "This message waited in line and was not sent: "+cancelMessage(err, r.cfg, plugin))
		}
	}
	defer r.slots.release(user)
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, r.cfg.TurnTimeout, ErrTurnTimeout)
	defer cancelTimeout()
	idle := newIdleWatch(SystemClock{}, r.cfg.IdleTimeout, func() { cancel(ErrIdleTimeout) })
	defer idle.stop()

	logger := r.logger.With("id", qm.id, "conversation", m.Key.String(), "plugin", plugin.ID())
	reply := a.coord.NewReply(r.deliverCtx, m.Target())
	stopTyping := r.typing(ctx, a.p, m.Target())
	started := r.clock.Now()
	token := conv.ResumeToken

	res, err := r.runPlugin(ctx, plugin, Turn{Key: m.Key, Workdir: workdir, Prompt: m.Text, ResumeToken: conv.ResumeToken, Ask: r.cfg.Ask},
		func(ev Event) {
			idle.touch()
			if ev.Kind == EventQuestion {
				r.ask(a, qm, ev.Question, idle)
				return
			}
			if ev.Kind == EventSession && ev.ResumeToken != "" {
				token = ev.ResumeToken
				r.mu.Lock()
				q.token = token
				r.mu.Unlock()
			}
			reply.Emit(ev)
		})
	r.dropQuestions(m.Key)
	idle.stop()
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
	r.convs.SetOwner(plugin.ID(), token, OwnerOf(m))

	outcome := OutcomeOK
	switch {
	case ctx.Err() != nil:
		cause := context.Cause(ctx)
		outcome = cancelOutcome(cause)
		reply.Add(ResponseBlock{Kind: BlockError, Text: cancelMessage(cause, r.cfg, plugin)})
	case err != nil:
		outcome = OutcomeError
		var pe *pluginPanic
		if errors.As(err, &pe) {
			outcome = OutcomePanic
		}
		logger.Warn("turn failed", "err", err)
		reply.Add(ResponseBlock{Kind: BlockError, Text: UserMessage(err)})
	case res.IsError:
		outcome = OutcomeError
	}
	if res.Duration == 0 {
		res.Duration = r.clock.Now().Sub(started)
	}
	reply.Add(ResponseBlock{Kind: BlockFooter, Duration: res.Duration, CostUSD: res.CostUSD})
	logger.Info("turn", "outcome", outcome, "duration", res.Duration, "cost_usd", res.CostUSD, "resume_token", token)
	r.obs.Record(Record{Kind: RecordTurn, ID: qm.id, Time: started, Key: m.Key, Author: m.Author(), Plugin: plugin.ID(),
		Workdir: workdir, ResumeToken: token, Duration: res.Duration, Outcome: outcome, CostUSD: res.CostUSD, Text: m.Text})
	return func() { reply.Close(r.deliverCtx) }
}

// pluginPanic is the error a recovered plugin panic becomes; it unwraps
// to the UserError the chat sees.
type pluginPanic struct{ err *UserError }

func (p *pluginPanic) Error() string { return p.err.Error() }
func (p *pluginPanic) Unwrap() error { return p.err }

// runPlugin runs the plugin, turning a panic into an error so that one bad
// turn cannot take the bot down.
func (r *Router) runPlugin(ctx context.Context, p Plugin, t Turn, emit func(Event)) (res TurnResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			r.logger.Error("plugin panicked", "plugin", p.ID(), "panic", v, "stack", string(debug.Stack()))
			err = &pluginPanic{&UserError{Msg: fmt.Sprintf("internal error: the %s plugin crashed (%v)", p.Name(), v)}}
		}
	}()
	return p.Run(ctx, t, emit)
}

func cancelOutcome(cause error) string {
	switch {
	case errors.Is(cause, ErrStopped):
		return OutcomeStopped
	case errors.Is(cause, ErrTurnTimeout):
		return OutcomeTimeout
	case errors.Is(cause, ErrIdleTimeout):
		return OutcomeIdleTimeout
	case errors.Is(cause, ErrShutdown):
		return OutcomeShutdown
	}
	return OutcomeCancelled
}

func cancelMessage(cause error, cfg RouterConfig, p Plugin) string {
	switch {
	case errors.Is(cause, ErrStopped):
		return "Stopped. The conversation continues with your next message."
	case errors.Is(cause, ErrTurnTimeout):
		return fmt.Sprintf("Turn timeout: the turn took longer than %s and was stopped. The conversation continues with your next message.", cfg.TurnTimeout)
	case errors.Is(cause, ErrIdleTimeout):
		return fmt.Sprintf("Idle timeout: %s printed nothing for %s and was stopped. The conversation continues with your next message.", p.Name(), cfg.IdleTimeout)
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

package core

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core/recent"
	"github.com/jake-bot/jake-bot/core/workspace"
)

// Router routes messages from every platform to commands and turns. It is
// safe for concurrent use.
type Router struct {
	cfg    RouterConfig
	convs  *State
	logger *slog.Logger
	clock  Clock

	// turnCtx is the parent of every turn; cancelling it (shutdown) kills
	// every running CLI. Replies are delivered under a context that
	// outlives it, so the chat still learns what happened.
	turnCtx    context.Context
	cancelAll  context.CancelCauseFunc
	deliverCtx context.Context

	limits *userLimits
	// notifies bounds the agents' notify per conversation.
	notifies *userLimits
	usage    *usageBook
	refused  *recent.Map[string, struct{}]

	// saidOnce remembers the notes said once per conversation: that a
	// dollar budget does not bound its CLI (unpricedNote), that its mode
	// is not its author's to use (turnFor).
	saidOnce    *recent.Map[string, struct{}]
	slots       *turnSlots
	holds       *budgetHolds
	warm        *warmPool
	questions   questions
	obs         Observer
	defaultRoot string
	// here is this machine's folders.
	here machine

	// platforms are the attached platforms by name: apart from turns,
	// since which platforms are attached is no conversation's state.
	platforms platformSet
	turns     *conversationTurns
	sched     *scheduler
	reactions reactions
	taken     takenMessages // the messages taken until answered, kept outside the process
	files     files
	// side is what agents side by side remember (core/sidebyside.go).
	side *sideBySide
}

// NewRouter returns a router. ctx is the bot's lifetime: when it ends,
// running turns are cancelled.
func NewRouter(ctx context.Context, cfg RouterConfig, convs *State) *Router {
	cfg = cfg.withDefaults()
	if convs == nil {
		convs = NewState()
	}
	turnCtx, cancel := context.WithCancelCause(ctx)
	r := &Router{
		cfg:         cfg,
		limits:      newUserLimits(cfg.UserRate),
		notifies:    newUserLimits(agentNotifyRate),
		usage:       newUsageBook(cfg.Plugins, cfg.LimitWarn, cfg.Clock, convs),
		refused:     recent.New[string, struct{}](10_000),
		saidOnce:    recent.New[string, struct{}](10_000),
		slots:       newTurnSlots(cfg.MaxRunningTurns, cfg.MaxUserTurns),
		warm:        newWarmPool(cfg.WarmTTL, cfg.WarmMax, cfg.Timers, cfg.WarmPressure),
		obs:         cfg.Observer,
		defaultRoot: workspace.DefaultRoot(cfg.Roots, cfg.DefaultWorkdir),
		here: machine{Machine: workspace.Machine{Roots: cfg.Roots, DefaultWorkdir: cfg.DefaultWorkdir, WorktreeDir: cfg.WorktreeDir},
			defaultRoot: workspace.DefaultRoot(cfg.Roots, cfg.DefaultWorkdir)},
		convs:      convs,
		logger:     OrDiscard(cfg.Logger),
		clock:      cfg.Clock,
		turnCtx:    turnCtx,
		cancelAll:  cancel,
		deliverCtx: context.WithoutCancel(ctx),
		platforms:  platformSet{byName: make(map[string]*attached)},
		turns:      newConversationTurns(cfg.QueueLimit),
		side:       newSideBySide(),
	}
	r.sched = &scheduler{r: r, flight: newSchedFlight()}
	r.side.r = r
	r.questions = questions{chat: r, convs: convs, turns: r.turns, reactions: &r.reactions,
		timeout: cfg.ApprovalTimeout, unattended: cfg.UnattendedApprovals, timers: cfg.Timers,
		redactor: cfg.Redactor, clock: cfg.Clock, logger: r.logger, deliver: r.deliverCtx}
	r.holds = newBudgetHolds(cfg.Budgets, cfg.Access, cfg.Clock, convs, r.saidOnce)
	r.taken = newTakenMessages(cfg.LocalTurns, cfg.Clock, r.logger)
	r.reactions = reactions{on: cfg.Reactions, stopping: turnCtx, deliver: r.deliverCtx, clock: cfg.Clock, logger: r.logger}
	r.files = files{chat: r, place: r.placeOf, rights: cfg.Access.RightsOf, maxBytes: cfg.AttachmentMaxBytes,
		hear: cfg.Transcribe, redactor: cfg.Redactor}
	return r
}

// Conversations returns the router's conversation map.
func (r *Router) Conversations() *State { return r.convs }

// Attach registers a platform and returns the handler to pass to its Run.
func (r *Router) Attach(p Platform) Handler {
	a := &attached{p: p, coord: NewStreamCoordinator(p, r.clock, r.logger.With("platform", p.Name()))}
	a.coord.obs = r.obs
	a.coord.redact = r.cfg.Redactor
	a.coord.longPages, a.coord.document = r.cfg.LongReplyPages, r.cfg.Document
	r.platforms.add(a)
	r.sched.armSchedules()            // the platform's schedules, late ones at once
	followed := r.followUnfinished(a) // the turns an earlier process left on runners
	// The messages it took, lost with it: known before the platform runs
	// and delivers one of them again, told meanwhile.
	lost := r.taken.lost(p.Name(), followed)
	go func() {
		for _, n := range lost {
			r.say(a, n.to, "", n.ans)
		}
	}()
	return func(ctx context.Context, m Message) { r.handle(ctx, a, m) }
}

// Shutdown cancels every running turn with ErrShutdown.
func (r *Router) Shutdown() {
	r.sched.stop()
	r.cancelAll(ErrShutdown)
	r.warm.closeAll()
}

// Wait blocks until no turn is running or queued.
func (r *Router) Wait() { r.turns.wait() }

// Stats returns a snapshot of the router's load.
func (r *Router) Stats() Stats {
	var st Stats
	st.Running, st.Queued = r.turns.counts()
	// A turn waiting for a slot is not running yet.
	waiting := r.slots.waitingCount()
	st.Running, st.Queued = max(0, st.Running-waiting), st.Queued+waiting
	st.Warm, st.WarmReady = r.warm.count(), r.warm.ready()
	st.Conversations = r.convs.Len()
	return st
}

// refuse records a user who is not allowed and returns the answer, said
// once per place, privately where the platform can: a stranger must not
// be able to make the bot write (even privately: each write spends the
// bot's rate limit) for every line they write.
func (r *Router) refuse(ctx context.Context, a *attached, m Message, rec Record) answer {
	r.logger.Warn("refused user", "id", rec.ID, "platform", m.Key.Platform, "user", m.Author())
	rec.Kind, rec.Outcome = RecordRefused, OutcomeError
	r.obs.Record(rec)
	if !r.refused.Add(m.Key.Platform+"/"+m.Author()+"/"+m.Key.Channel+"/"+m.Key.Thread, struct{}{}) {
		return answer{}
	}
	if rf, ok := a.p.(Refuser); ok {
		if err := rf.Refuse(ctx, m, Refusal(m)); err == nil {
			return answer{}
		}
	}
	return answer{text: Refusal(m)}
}

// handle routes one message from platform a and sends what it answers at
// once. A panic while handling it is recovered, logged with its stack and
// reported to the message's chat; no other conversation is affected.
func (r *Router) handle(ctx context.Context, a *attached, m Message) {
	id := newID()
	// Deferred first so that it runs last, after a panic's reply.
	done, taken := m.finisher(), false
	defer func() {
		if !taken {
			done()
		}
	}()
	defer r.recoverHandling(a, m, id)
	var ans answer
	taken, ans = r.route(ctx, a, m, id, done)
	r.say(a, m.Target(), id, ans)
}

// route admits m and dispatches it: a command, an answer to a question,
// or a turn. It reports whether m was taken (done is then called once it
// is over) and returns what to tell the chat at once.
func (r *Router) route(ctx context.Context, a *attached, m Message, id string, done func()) (taken bool, ans answer) {
	if r.taken.takenBefore(m) {
		r.logger.Info("message delivered again after a takeover: the process that took it left it, and its chat is told", "id", id, "conversation", m.Key.String(), "message", m.ID)
		return false, answer{}
	}
	rec := Record{ID: id, Time: r.clock.Now(), Key: m.Key, Author: m.Author(), Text: m.Text}
	if !m.Allowed && !r.cfg.Access.Allowed(m.Key.Platform, m.Author()) {
		return false, r.refuse(ctx, a, m, rec)
	}
	// What m may do is decided here, once, by who made it (permitsOf): a
	// message the agent caused is never a command nor an answer, only a
	// turn of its own.
	c := r.newCall(ctx, a, m, id, done)
	// Admins are trusted with the host already (any root, every
	// conversation); the limit guards against everyone else. It also
	// spares a scripted console, whose one user is an admin.
	if wait := r.limits.take(m.Key.Platform, m.Author(), rec.Time); wait > 0 && !c.who.Admin {
		r.logger.Info("rate limited", "id", id, "conversation", m.Key.String(), "retry_after", wait)
		rec.Kind, rec.Outcome = RecordLimited, OutcomeError
		r.obs.Record(rec)
		return false, answer{err: Errorf("you are sending messages faster than this bot allows (%s). Try again in %s; this message was not sent.", r.cfg.UserRate, roundUp(wait))}
	}
	text, err := r.checkText(m.Text)
	if err != nil {
		rec.Kind, rec.Outcome = RecordRejected, OutcomeError
		r.obs.Record(rec)
		return false, answer{err: err}
	}
	m.Text = text
	c.m.Text = text
	if IsCommand(m.Text) && c.may.command == nil {
		r.command(c)
		return c.tookDone, answer{}
	}
	if len(m.Files) == 0 && c.may.answer == nil && c.answer("", parseAnswer(m.Text)) {
		return true, answer{} // the answer holds done
	}
	m.Text = ForCLI(m.Text)
	if !c.hasConv {
		return false, answer{text: r.noConversation()}
	}
	return r.line(a, queued{m: m, id: id, conv: c.conv, may: c.may, done: done}, "")
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

// recoverHandling turns a panic in handling m into a logged error and a
// reply, so one bad message cannot take the platform's loop down.
func (r *Router) recoverHandling(a *attached, m Message, id string) {
	v := recover()
	if v == nil {
		return
	}
	r.logger.Error("panic while handling a message", "id", id, "conversation", m.Key.String(), "panic", v, "stack", string(debug.Stack()))
	r.obs.Record(Record{Kind: RecordCommand, ID: id, Time: r.clock.Now(), Key: m.Key, Author: m.Author(), Outcome: OutcomePanic})
	r.replyError(a, m.Target(), id, &UserError{Msg: fmt.Sprintf("internal error (id %s): handling your message crashed; the bot's log has the details. Other conversations are not affected.", id)})
}

// permitsOf decides what m may do.
func (r *Router) permitsOf(m Message) permits {
	o := m.Origin()
	admin := r.cfg.Access.RightsOf(m).Admin
	b := r.cfg.Budgets
	p := permits{origin: o, admin: admin, ownBudget: (b.UserDailyUSD > 0 || b.UserDailyTokens > 0) && (b.Admins || !admin)}
	if o.Kind != OriginPerson && o.Kind != OriginSchedule {
		p.command = Errorf("a message sent by a %s is never a command", o.Kind)
	}
	if o.Kind != OriginPerson {
		p.answer = Errorf("only a person's own message or button press acts on a running turn, not a %s's", o.Kind)
	}
	switch {
	case o.Kind == OriginAgent || o.Kind == OriginAgentSchedule:
		p.bypass = Errorf("a turn the agent set runs no mode that skips approvals")
	case o.Kind == OriginHelper:
		p.bypass = Errorf("a turn another agent of the conversation caused runs no mode that skips approvals")
	case !r.cfg.AllowBypassModes && !admin:
		p.bypass = Errorf("only admins may use a mode that skips approvals")
	}
	return p
}

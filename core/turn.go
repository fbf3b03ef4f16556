package core

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"
)

// runTurn runs one turn and returns the function that delivers its final
// reply. A panic outside the plugin (which runPlugin already guards) is
// recovered here, so the conversation's queue is always released.
func (r *Router) runTurn(a *attached, q *runningTurn, qm queued) (deliver func()) {
	m := qm.m
	defer r.recoverTurn(a, qm, &deliver)
	conv, plugin, workdir, refusal := r.turnPlace(qm)
	if refusal != nil {
		return func() { r.replyError(a, m.Target(), qm.id, refusal) }
	}
	// Refused at once if the day's budget is spent; what the turn may
	// spend is settled once it has a slot (holdBudget).
	if _, refusal := r.holds.budgetFor(m, 0); refusal != nil {
		return func() { r.replyError(a, m.Target(), qm.id, refusal) }
	}
	ctx, cancel := context.WithCancelCause(r.turnCtx)
	defer cancel(nil)
	r.turns.began(q, qm, cancel, plugin.ID(), qm.sessionOf(conv))
	user := OwnerOf(m)
	maxUSD, release, refused := r.admit(ctx, a, qm, plugin)
	if refused != nil {
		return refused
	}
	defer release()
	timeout := time.AfterFunc(r.cfg.TurnTimeout, func() { cancel(ErrTurnTimeout) })
	defer timeout.Stop()
	idle := newIdleWatch(SystemClock{}, r.cfg.IdleTimeout, func() { cancel(ErrIdleTimeout) })
	defer idle.stop()

	turn, modeNote := r.turnFor(m, qm.may, conv, plugin, workdir, maxUSD)
	qm.applySide(&turn, conv)
	turn.Side = r.side.record(m.Key, qm.side)
	if err := r.turnMessage(ctx, a, qm, conv, workdir, &turn); err != nil {
		return func() { r.replyError(a, m.Target(), qm.id, err) }
	}
	turn.Inbox = &Inbox{}
	defer turn.Inbox.Close()
	var warm WarmTurn
	var tools *toolLease
	if !qm.side.helps() { // the warm CLI is the author's
		warm, tools = r.warmFor(plugin.ID(), turn)
	}
	if warm == nil {
		tools = r.leaseTools()
	}
	defer tools.end()
	tools.bind(a, qm, idle)
	turn.Tools = tools.Access()
	r.turns.streaming(q, turn.Inbox, conv, workdir)
	t := &turnRun{qm: qm, q: q, conv: conv, plugin: plugin, workdir: workdir, user: user, maxUSD: maxUSD,
		reply: a.coord.NewReply(r.deliverCtx, m.Target()), sessionID: qm.sessionOf(conv), cancel: cancel, timeout: timeout}
	if qm.side != nil && qm.side.label != "" {
		t.reply.Add(ResponseBlock{Kind: BlockStatus, Text: qm.side.label})
	}
	if modeNote != "" {
		t.reply.Add(ResponseBlock{Kind: BlockWarning, Text: modeNote})
	}
	stopTyping := r.typing(ctx, a.p, m.Target())
	r.reactions.react(a, m, ReactionRunning)
	t.started = r.clock.Now()
	res, err := r.streamTurn(ctx, a, t, warm, turn, idle)
	stopTyping()
	return r.endTurn(ctx, a, t, res, err)
}

// turnMessage gives turn qm's message: its text, and its files saved in
// workdir now or, for a message a running turn could not take, as they
// were saved then (queued.saved).
func (r *Router) turnMessage(ctx context.Context, a *attached, qm queued, conv Conversation, workdir string, turn *Turn) error {
	turn.Prompt = qm.m.Text
	switch {
	case qm.saved != nil:
		turn.Prompt, turn.Images = qm.saved.Prompt, qm.saved.Images
	case len(qm.m.Files) > 0:
		var err error
		turn.Prompt, turn.Images, err = r.files.takeFiles(ctx, a, qm.m, conv, workdir)
		return err
	}
	return nil
}

// recoverTurn, deferred, turns a panic while running qm's turn into the
// reply deliver gives.
func (r *Router) recoverTurn(a *attached, qm queued, deliver *func()) {
	v := recover()
	if v == nil {
		return
	}
	m := qm.m
	r.logger.Error("panic while running a turn", "id", qm.id, "conversation", m.Key.String(), "panic", v, "stack", string(debug.Stack()))
	r.obs.Record(Record{Kind: RecordTurn, ID: qm.id, Time: r.clock.Now(), Key: m.Key, Author: m.Author(), Outcome: OutcomePanic})
	*deliver = func() {
		r.replyError(a, m.Target(), qm.id, &UserError{Msg: fmt.Sprintf("internal error (id %s): this turn crashed; the bot's log has the details.", qm.id)})
	}
}

// admit waits for a slot for qm's turn (MAX_RUNNING_TURNS,
// MAX_USER_TURNS), then for its cost bound (holdBudget): the day's budget
// is checked again once the turn may start, since the author's other
// turns may have spent it meanwhile. release gives both back; a non-nil
// refused delivers why the turn did not run instead.
func (r *Router) admit(ctx context.Context, a *attached, qm queued, plugin Plugin) (maxUSD float64, release, refused func()) {
	m, user := qm.m, OwnerOf(qm.m)
	if err := r.slots.acquire(ctx, user, func(place int) {
		r.reply(a, m.Target(), fmt.Sprintf("The bot is running as many turns as it may; this one is number %d in line and starts when another ends (/stop to drop it).", place))
	}); err != nil {
		return 0, nil, func() {
			r.reply(a, m.Target(), "This message waited in line and was not sent: "+cancelMessage(err, r.cfg, plugin))
		}
	}
	maxUSD, unhold, err := r.holds.holdBudget(ctx, m, func() {
		r.reply(a, m.Target(), fmt.Sprintf("Your turns running now may spend all that is left of your daily budget ($%.2f): this one starts when one of them ends (/stop to drop it).", r.cfg.Budgets.UserDailyUSD))
	})
	switch {
	case err != nil && ctx.Err() != nil:
		r.slots.release(user)
		return 0, nil, func() {
			r.reply(a, m.Target(), "This message waited for your running turns and was not sent: "+cancelMessage(err, r.cfg, plugin))
		}
	case err != nil:
		r.slots.release(user)
		return 0, nil, func() { r.replyError(a, m.Target(), qm.id, err) }
	}
	return maxUSD, func() { unhold(); r.slots.release(user) }, nil
}

// streamTurn runs the plugin, streaming its events into the reply; a
// question goes to the chat instead.
func (r *Router) streamTurn(ctx context.Context, a *attached, t *turnRun, warm WarmTurn, turn Turn, idle *idleWatch) (TurnResult, error) {
	res, err := r.runPlugin(ctx, t.plugin, warm, turn,
		func(ev Event) {
			idle.touch()
			switch {
			case ev.Kind == EventQuestion:
				r.questions.ask(a, t.qm, ev.Question, idle)
				return
			case ev.Kind == EventBackground && ev.Background != nil:
				r.background(t, *ev.Background, idle)
				return
			case ev.Kind == EventLimit:
				if ev.Limit != nil {
					t.keepUsage(r.usage, *ev.Limit)
				}
				return
			case progresses(ev):
				t.progressed.Store(true)
			case ev.Kind == EventSession && ev.SessionID != "":
				t.setSession(ev.SessionID)
				r.turns.setSession(t.q, ev.SessionID)
			}
			if ev.Kind == EventText {
				t.said.add(ev.Text)
			}
			t.reply.Emit(ev)
		})
	r.questions.dropQuestions(t.qm.m.Key)
	idle.stop()
	r.endBackground(t)
	if res.SessionID != "" {
		t.setSession(res.SessionID)
	}
	return res, err
}

// endTurn keeps the session and the spend, ends the reply with the
// turn's outcome, records the turn, and returns what delivers the rest.
func (r *Router) endTurn(ctx context.Context, a *attached, t *turnRun, res TurnResult, err error) (deliver func()) {
	m, plugin := t.qm.m, t.plugin
	// A turn that never reached the model (no CLI, refused) cost nothing.
	counted := err == nil || res.CostUSD > 0 || res.InputTokens+res.OutputTokens > 0
	sessionID := t.session()
	if t.qm.side.helps() {
		r.side.keepHelperSession(m, t.conv, plugin, sessionID, res, counted)
	} else {
		r.keepSession(m, t.conv, plugin, sessionID, res, counted)
	}
	if counted {
		r.convs.AddSpend(t.user, Day(r.clock.Now()), res)
	}
	outcome := r.turnOutcome(ctx, t.qm.id, err, res, plugin, t.reply)
	if err != nil && ctx.Err() == nil {
		r.logger.Warn("turn failed", "id", t.qm.id, "conversation", m.Key.String(), "plugin", plugin.ID(), "err", err)
	}
	if res.Duration == 0 {
		res.Duration = r.clock.Now().Sub(t.started)
	}
	notes := []string{r.holds.budgetNote(t.maxUSD, res), r.holds.unpricedNote(m, plugin, res)}
	cont := r.sched.continueAfterLimit(ctx, t, res, err)
	if cont == nil {
		notes = append(notes, t.limitNotes(r.usage)...)
	}
	r.logger.Info("turn", "id", t.qm.id, "conversation", m.Key.String(), "plugin", plugin.ID(), "outcome", outcome,
		"duration", res.Duration, "cost_usd", res.CostUSD, "session_id", sessionID)
	r.obs.Record(Record{Kind: RecordTurn, ID: t.qm.id, Time: t.started, Key: m.Key, Author: m.Author(), Plugin: plugin.ID(),
		Workdir: t.workdir, SessionID: sessionID, Duration: res.Duration, Outcome: outcome, CostUSD: res.CostUSD,
		InputTokens: res.InputTokens, OutputTokens: res.OutputTokens, Text: m.Text})
	return func() {
		// The footer comes once the conversation is released (runQueued):
		// whoever sees it may start, end or resume at once.
		for _, note := range notes {
			if note != "" {
				t.reply.Add(ResponseBlock{Kind: BlockWarning, Text: note})
			}
		}
		t.reply.Add(ResponseBlock{Kind: BlockFooter, Duration: res.Duration, CostUSD: res.CostUSD,
			InputTokens: res.InputTokens, OutputTokens: res.OutputTokens, ContextPercent: res.ContextPercent()})
		t.reply.Close(r.deliverCtx)
		if cont != nil {
			r.sched.offerContinuation(a, m.Target(), plugin.ID(), cont)
		}
		r.reactions.react(a, m, endReaction(outcome, cont != nil))
		r.side.afterSide(a, t, outcome)
		if after := r.cfg.NotifyAfter; after > 0 && res.Duration > after && !slices.Contains([]string{OutcomeStopped, OutcomeShutdown, OutcomeCancelled}, outcome) {
			r.notify(a, m, NotifyLongTurn, fmt.Sprintf("%s %s after %s.", endIcon(outcome), plugin.Name()+" "+endWords(outcome), res.Duration.Round(time.Second)))
		}
	}
}

// turnPlace returns where qm's turn runs: its conversation as it is now
// (the turn before may have given it a new session), provided it is still
// the one qm was written to, its plugin, and its workdir checked again for
// the author. A non-nil refusal says why the turn cannot run.
func (r *Router) turnPlace(qm queued) (conv Conversation, plugin Plugin, workdir string, refusal error) {
	m := qm.m
	conv, ok := r.convs.Still(m.Key, qm.conv)
	if !ok {
		return conv, nil, "", Errorf("the conversation this message was written to ended before its turn; it was not sent")
	}
	if qm.follow != nil {
		// A turn an earlier process left running on a runner: it follows
		// that turn, whose workdir was checked when it started.
		return conv, qm.follow, conv.Workdir, nil
	}
	place := r.placeOf(conv, r.cfg.Access.RightsOf(m))
	if plugin, refusal = place.Plugin(qm.pluginOf(conv), m); refusal != nil {
		return conv, nil, "", refusal
	}
	workdir, err := place.Workdir(r.turnCtx, conv.Workdir)
	if err != nil {
		r.logger.Warn("turn refused by the workdir policy", "id", qm.id, "conversation", m.Key.String(), "user", m.Author(), "err", err)
		return conv, nil, "", err
	}
	return conv, plugin, workdir, nil
}

// keepSession stores the turn's session id and spend in its
// conversation, unless a /start or /resume meanwhile made a new one, and
// records who started the session.
func (r *Router) keepSession(m Message, conv Conversation, plugin Plugin, sessionID string, res TurnResult, counted bool) {
	r.convs.UpdateStill(m.Key, conv, func(c *Conversation) {
		c.SessionID = sessionID
		c.LastUsed = r.clock.Now()
		if counted {
			c.Spent.add(res)
		}
	})
	r.convs.SetOwner(plugin.ID(), sessionID, OwnerOf(m))
}

// turnOutcome adds the block that says how a turn that did not end well
// ended, and returns the outcome to record.
func (r *Router) turnOutcome(ctx context.Context, id string, err error, res TurnResult, plugin Plugin, reply *Reply) string {
	switch {
	case errors.Is(err, ErrTurnGoesOn):
		reply.Add(ResponseBlock{Kind: BlockWarning, Text: UserMessage(err)})
		return OutcomeShutdown
	case ctx.Err() != nil:
		cause := context.Cause(ctx)
		reply.Add(ResponseBlock{Kind: BlockError, Text: cancelMessage(cause, r.cfg, plugin)})
		return cancelOutcome(cause)
	case err != nil:
		reply.Add(ResponseBlock{Kind: BlockError, Text: errorText(err, id)})
		var pe *pluginPanic
		if errors.As(err, &pe) {
			return OutcomePanic
		}
		return OutcomeError
	case res.IsError:
		return OutcomeError
	}
	return OutcomeOK
}

// runPlugin runs the plugin, turning a panic into an error so that one bad
// turn cannot take the bot down.
func (r *Router) runPlugin(ctx context.Context, p Plugin, warm WarmTurn, t Turn, emit func(Event)) (res TurnResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			r.logger.Error("plugin panicked", "plugin", p.ID(), "panic", v, "stack", string(debug.Stack()))
			err = &pluginPanic{&UserError{Msg: fmt.Sprintf("internal error: the %s plugin crashed; the bot's log has the details", p.Name())}}
		}
	}()
	if warm != nil {
		return warm.Run(ctx, t, emit)
	}
	return p.Run(ctx, t, emit)
}

func cancelMessage(cause error, cfg RouterConfig, p Plugin) string {
	switch {
	case errors.Is(cause, ErrStopped):
		return "Stopped. The conversation continues with your next message."
	case errors.Is(cause, ErrSentNow):
		return "Interrupted for the message sent now, which runs next; this turn's work so far stays in the session."
	case errors.Is(cause, ErrTurnTimeout):
		return fmt.Sprintf("Turn timeout: the turn took longer than %s and was stopped. The conversation continues with your next message.", cfg.TurnTimeout)
	case errors.Is(cause, ErrBackgroundLimit):
		return backgroundLimitMessage(cfg)
	case errors.Is(cause, ErrIdleTimeout):
		return fmt.Sprintf("Idle timeout: %s printed nothing for %s and was stopped. The conversation continues with your next message.", p.Name(), cfg.IdleTimeout)
	case errors.Is(cause, ErrShutdown):
		return fmt.Sprintf("The bot is restarting; this turn was stopped. Send your message again once it is back (/%s resume continues this session).", p.ID())
	}
	return "The turn was cancelled: " + cause.Error()
}

// background shows b in t's reply and in /status, and keeps the turn
// open for it as backgroundWatch says.
func (r *Router) background(t *turnRun, b Background, idle *idleWatch) {
	w := &t.bg
	r.turns.setBackground(t.q, b.Tasks)
	running := len(b.Tasks) > 0
	switch {
	case running:
		w.started = b.Tasks
		t.reply.Add(ResponseBlock{Kind: BlockStatus, ID: backgroundID, Text: "⏳ Background: " + b.Summary() +
			" (the reply goes on when it ends; /stop ends it)"})
	case len(w.started) > 0:
		t.reply.Add(ResponseBlock{Kind: BlockStatus, ID: backgroundID, Text: "✓ Background work ended: " +
			Background{Tasks: w.started}.Summary()})
	}
	if running != w.paused {
		if running {
			idle.pause()
		} else {
			idle.resume()
		}
		w.paused = running
	}
	if running && b.Answered && w.limit == nil {
		t.timeout.Stop()
		w.limit = r.cfg.Timers.AfterFunc(r.cfg.BackgroundLimit, func() { t.cancel(ErrBackgroundLimit) })
	}
}

// endBackground forgets the turn's background work once it has ended.
func (r *Router) endBackground(t *turnRun) {
	if t.bg.limit != nil {
		t.bg.limit.Stop()
	}
	r.turns.setBackground(t.q, nil)
}

// backgroundLimitMessage says why a turn's background work was stopped.
func backgroundLimitMessage(cfg RouterConfig) string {
	return fmt.Sprintf("Background work stopped with the turn: it still ran %s after the answer (BACKGROUND_LIMIT), so the CLI was stopped and what it would have reported is lost. The conversation continues with your next message.", cfg.BackgroundLimit)
}

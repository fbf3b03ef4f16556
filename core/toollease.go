package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// turnActions is TurnActions for one CLI process: it acts once bound to
// the turn the process runs (a warm CLI is started before its turn), and
// refuses every call before and after.
type turnActions struct {
	r     *Router
	calls chan struct{} // a token per call the turn may still make
	// sending holds a token while the turn's agent sends a file: one at
	// a time (fileSends).
	sending chan struct{}

	mu  sync.Mutex
	run *toolRun
}

// toolLease is the bot's MCP server opened for one CLI process: its
// access, to tell the CLI, lives until end.
type toolLease struct {
	access  *ToolAccess
	actions *turnActions
	close   func()
	once    sync.Once
}

// leaseTools opens the bot's MCP server for a CLI process about to start,
// or returns nil without one (AGENT_TOOLS=off).
func (r *Router) leaseTools() *toolLease {
	if r.cfg.AgentTools == nil {
		return nil
	}
	calls := make(chan struct{}, maxToolCallsRun)
	for range maxToolCallsRun {
		calls <- struct{}{}
	}
	t := &turnActions{r: r, calls: calls, sending: make(chan struct{}, 1)}
	access, closeFn := r.cfg.AgentTools.Open(t, nil)
	if access != nil {
		access.Actions = t
	}
	return &toolLease{access: access, actions: t, close: closeFn}
}

// Access is what the CLI is told, nil for no lease.
func (l *toolLease) Access() *ToolAccess {
	if l == nil {
		return nil
	}
	return l.access
}

// bind lets the tools act on qm's turn.
func (l *toolLease) bind(a *attached, qm queued, idle *idleWatch) {
	if l == nil {
		return
	}
	l.actions.mu.Lock()
	l.actions.run = &toolRun{a: a, qm: qm, idle: idle}
	l.actions.mu.Unlock()
}

// end kills the lease's credential: the server refuses it from now on.
func (l *toolLease) end() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		l.actions.mu.Lock()
		l.actions.run = nil
		l.actions.mu.Unlock()
		l.close()
	})
}

// call runs one tool call within the turn's bounds and puts it in the
// audit log.
func (t *turnActions) call(tool, what string, f func(run *toolRun) (string, error)) (string, error) {
	t.mu.Lock()
	run := t.run
	t.mu.Unlock()
	if run == nil {
		return "", Errorf("no turn is running: the bot's tools act only during the turn they were given to")
	}
	var out string
	var err error
	select {
	case <-t.calls:
		out, err = f(run)
	default:
		err = Errorf("this turn has made %d calls of the bot's tools, the most one may", maxToolCallsRun)
	}
	m := run.qm.m
	rec := Record{Kind: RecordAgentTool, ID: run.qm.id, Time: t.r.clock.Now(), Key: m.Key, Author: m.Author(),
		Command: tool, Outcome: OutcomeOK, Text: Shorten(what, 200)}
	if err != nil {
		rec.Outcome = OutcomeError
	}
	t.r.obs.Record(rec)
	return out, err
}

func (t *turnActions) SendFile(ctx context.Context, path, caption string) error {
	_, err := t.call(ToolSendFile, path, func(run *toolRun) (string, error) {
		if len(caption) > maxToolText {
			return "", toolText("the caption", caption)
		}
		c := t.r.newCall(ctx, run.a, run.qm.m, run.qm.id, nil)
		if !c.hasConv {
			return "", Errorf("the conversation has ended")
		}
		conv := c.conv
		if err := acquire(ctx, t.sending); err != nil {
			return "", fmt.Errorf("waiting for the turn's other file: %w", err)
		}
		defer func() { <-t.sending }()
		fs, ok := run.a.p.(FileSender)
		if !ok {
			// The console: the user is on this machine, and is told
			// where the file is (as /file does).
			text, err := t.r.files.fileWithoutSending(ctx, run.qm.m, conv, path, caption)
			if err == nil {
				t.r.reply(run.a, run.qm.m.Target(), "📎 The agent sends a file. "+text)
			}
			return "", err
		}
		return "", t.r.files.sendWorkFile(ctx, fs, run.qm.m, conv, path, caption)
	})
	return err
}

func (t *turnActions) Notify(ctx context.Context, text string) error {
	_, err := t.call(ToolNotify, text, func(run *toolRun) (string, error) {
		if err := toolText("the text", text); err != nil {
			return "", err
		}
		m := run.qm.m
		if wait := t.r.notifies.take(m.Key.Platform, m.Key.String(), t.r.clock.Now()); wait > 0 {
			return "", Errorf("this conversation was notified as often as an agent may (%s): notify again in %s, or say it in your answer", agentNotifyRate, roundUp(wait))
		}
		if _, ok := run.a.p.(Notifier); ok {
			t.r.notify(run.a, run.qm.m, NotifyAgent, text)
		} else {
			t.r.reply(run.a, run.qm.m.Target(), "🔔 "+text)
		}
		return "", nil
	})
	return err
}

func (t *turnActions) Ask(ctx context.Context, question string, options []string) (string, error) {
	return t.call(ToolAskUser, question, func(run *toolRun) (string, error) {
		if err := toolText("the question", question); err != nil {
			return "", err
		}
		if len(options) > maxToolOptions {
			return "", Errorf("%d options: at most %d", len(options), maxToolOptions)
		}
		answers := make(chan Answer, 1)
		q := &Question{Tool: ToolAskUser, Summary: question, Options: options, Open: true,
			Answer: func(a Answer) { answers <- a }}
		// The message's done is the turn's own, not this question's.
		qm := run.qm
		qm.done = func() {}
		t.r.questions.ask(run.a, qm, q, run.idle)
		select {
		case a := <-answers:
			if a.Decision == Deny {
				return "", Errorf("no answer: %s", a.Reason)
			}
			return a.Choice, nil
		case <-ctx.Done():
			return "", fmt.Errorf("the question was dropped: %w", context.Cause(ctx))
		}
	})
}

func (t *turnActions) Schedule(ctx context.Context, when, message string) (string, error) {
	return t.call(ToolSchedule, when+" "+message, func(run *toolRun) (string, error) {
		if err := toolText("the message", message); err != nil {
			return "", err
		}
		if strings.ContainsAny(when, " \t\n") {
			return "", Errorf("%q is not a time: use 30m, 2h, 09:00 or an RFC 3339 time", when)
		}
		if IsCommand(message) {
			return "", Errorf("a scheduled message starts a turn of its own: it is never a command of the bot, so it may not start with /")
		}
		// The schedule is the agent's, not its user's (Router.permitsOf),
		// one deeper than the turn it is set in (agentScheduleLimits).
		m := run.qm.m
		m.origin = OriginAgent
		return t.r.newCall(ctx, run.a, m, run.qm.id, nil).schedule(Command{Name: CmdAt, Arg: when + " " + message})
	})
}

// toolRun is the running turn the tools act on.
type toolRun struct {
	a    *attached
	qm   queued
	idle *idleWatch
}

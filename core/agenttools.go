package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// AgentTools is the bot's MCP server (issue 31), through which a turn's
// agent reaches its own conversation: bot/agenttools serves it, so that
// core does not depend on the MCP SDK.
type AgentTools interface {
	// Open gives a turn its capability: where the server is and a
	// credential that acts only through actions, until closed. only, when
	// not nil, narrows the server's tools for the turn: the agent is not
	// shown a tool that would be refused.
	Open(actions TurnActions, only []string) (access *ToolAccess, close func())
}

// ToolAccess is what a plugin tells its CLI about the bot's MCP server
// for one turn (Turn.Tools).
type ToolAccess struct {
	// URL is the server's streamable HTTP endpoint on 127.0.0.1.
	URL string
	// Token is the turn's bearer token: the server refuses any other, and
	// this one once the turn has ended.
	Token string
	// Tools are the tools served (AGENT_TOOLS), for a CLI that must be
	// told which of them run without approval.
	Tools []string
	// Actions are what the tools do in the turn's conversation, for a
	// plugin whose CLI reaches them through a server elsewhere: the
	// remote plugin answers a runner's calls with them.
	Actions TurnActions
	// Spawned, when not nil, is to be told the id of the process the
	// plugin started with this access: the outermost, a sandbox's if the
	// CLI runs in one. The server then serves the token only to a
	// connection of that process or of one it started, not to another
	// CLI that read the token (every process of the bot's user can read
	// /proc/<pid>/environ); until then it waits.
	Spawned func(pid int)
}

// Agent tools' names, as the MCP server offers them.
const (
	ToolSendFile = "send_file"
	ToolNotify   = "notify"
	ToolAskUser  = "ask_user"
	ToolSchedule = "schedule"
)

// ToolNamesHeader is the request header by which a CLI's MCP client asks
// the bot's server for some of its tools under other names: tool=name
// pairs, comma-separated ("ask_user=ask_the_user"). Gemini CLI over ACP
// hides every tool named ask_user, its own and any MCP server's.
const ToolNamesHeader = "X-Jakebot-Tool-Names"

// AllAgentTools are the tools AGENT_TOOLS offers by default.
var AllAgentTools = []string{ToolSendFile, ToolNotify, ToolAskUser, ToolSchedule}

// agentNotifyRate bounds how often the agents of one conversation's turns
// may notify (notify): a burst of 5, then one every 2 minutes.
var agentNotifyRate = Rate{N: 5, Per: 10 * time.Minute}

// Bounds of what the agent may say through its tools.
const (
	maxToolText     = 2000
	maxToolOptions  = 10
	maxToolCallsRun = 50
)

// TurnActions is what the agent may do in its turn's conversation, with
// the rules of the commands a user has for the same (/file, /at). An
// error is for the agent to read.
type TurnActions interface {
	SendFile(ctx context.Context, path, caption string) error
	Notify(ctx context.Context, text string) error
	// Ask waits for the answer of the conversation's users, at most
	// APPROVAL_TIMEOUT.
	Ask(ctx context.Context, question string, options []string) (string, error)
	Schedule(ctx context.Context, when, message string) (string, error)
}

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

// toolRun is the running turn the tools act on.
type toolRun struct {
	a    *attached
	qm   queued
	idle *idleWatch
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

func toolText(name, text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return Errorf("%s is empty", name)
	case len(text) > maxToolText:
		return Errorf("%s is %d bytes, over the %d the bot takes", name, len(text), maxToolText)
	}
	return nil
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

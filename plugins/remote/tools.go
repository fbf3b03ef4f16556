package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
)

// The agent tools of a turn on a runner (issue 31): the runner serves the
// bot's MCP server beside its CLI (its own RunnerConfig.AgentTools, the
// same server definition as the gateway's), and relays each call over
// NATS, on the turn's own subject, to the gateway, which answers it with
// the turn's core.TurnActions: those of that turn's conversation only,
// dead once the turn ended. Each side checks a call with its own rules.

// serveTools answers the tool calls of rec's turn with access's actions,
// from before the runner hears of the turn; stop ends that.
func (p *remotePlugin) serveTools(rec *turnRecord, access *core.ToolAccess) (stop func(), err error) {
	if access == nil || access.Actions == nil {
		return func() {}, nil
	}
	ctx, cancel := context.WithCancel(p.g.ctx)
	sub, err := p.g.nc.Subscribe(turnSubject(p.runner, rec.ID, "tool"), func(m *nats.Msg) {
		go p.toolCall(ctx, access, m) // ask_user waits for the chat
	})
	if err == nil {
		if err = p.g.nc.Flush(); err != nil {
			sub.Unsubscribe()
		}
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("agent tools for the turn: %w", err)
	}
	return func() {
		sub.Unsubscribe()
		cancel()
	}, nil
}

// toolCall answers one call: only of a tool the gateway offers, done by
// the turn's actions, which apply the rules of a local turn's (the
// conversation's users, /file's roots and limits, /at's).
func (p *remotePlugin) toolCall(ctx context.Context, access *core.ToolAccess, m *nats.Msg) {
	var c toolCall
	var res string
	err := json.Unmarshal(m.Data, &c)
	a := access.Actions
	switch {
	case err != nil:
		err = core.Errorf("a malformed tool call")
	case !slices.Contains(access.Tools, c.Tool):
		err = core.Errorf("the bot offers no tool %q here (AGENT_TOOLS)", c.Tool)
	case c.Tool == core.ToolSendFile:
		res, err = "sent "+c.Path, a.SendFile(ctx, c.Path, c.Caption)
	case c.Tool == core.ToolNotify:
		res, err = "notified", a.Notify(ctx, c.Text)
	case c.Tool == core.ToolAskUser:
		res, err = a.Ask(ctx, c.Question, c.Options)
	case c.Tool == core.ToolSchedule:
		res, err = a.Schedule(ctx, c.When, c.Message)
	}
	red := p.g.cfg.Redactor
	rep := toolReply{Result: red.Redact(res), Error: toWire(err)}
	if rep.Error != nil {
		rep.Error.Message = red.Redact(rep.Error.Message)
	}
	data, _ := json.Marshal(rep)
	if err := m.Respond(data); err != nil {
		p.g.cfg.Logger.Warn("tool call not answered", "subject", m.Subject, "err", err)
	}
}

// openTools opens the runner's MCP server for rt's CLI when both sides
// serve tools: it offers those of the runner's AGENT_TOOLS that the
// gateway answers too. Its Actions relay each call.
func (r *Runner) openTools(rt *runnerTurn, gateway []string) (*core.ToolAccess, func()) {
	if r.cfg.AgentTools == nil || len(gateway) == 0 {
		return nil, func() {}
	}
	relay := &relayedActions{t: rt}
	access, closeFn := r.cfg.AgentTools.Open(relay, gateway)
	if access == nil {
		return nil, closeFn
	}
	access.Actions = relay
	return access, closeFn
}

// relayedActions are core.TurnActions on a runner: each call goes to the
// gateway following the turn, without the runner's secrets.
type relayedActions struct{ t *runnerTurn }

var _ core.TurnActions = (*relayedActions)(nil)

// call relays c and waits for its answer: at most requestTimeout, or
// until ctx ends for a question to the chat (wait).
func (a *relayedActions) call(ctx context.Context, c toolCall, wait bool) (string, error) {
	r := a.t.r
	red := r.cfg.Redactor
	c.Caption, c.Text, c.Question, c.Message = red.Redact(c.Caption), red.Redact(c.Text), red.Redact(c.Question), red.Redact(c.Message)
	for i := range c.Options {
		c.Options[i] = red.Redact(c.Options[i])
	}
	if !wait {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	data, _ := json.Marshal(c)
	m, err := r.nc.RequestWithContext(ctx, turnSubject(r.cfg.Name, a.t.id, "tool"), data)
	if err != nil {
		return "", fmt.Errorf("the bot's gateway did not answer the %s call: %w", c.Tool, err)
	}
	var rep toolReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return "", fmt.Errorf("the gateway's answer to the %s call: %w", c.Tool, err)
	}
	return rep.Result, rep.Error.err()
}

// SendFile checks the file here first, as /file's part requests are: in
// the user's roots here, a regular file within the runner's limit. The
// gateway then reads it through those requests, checked again.
func (a *relayedActions) SendFile(ctx context.Context, path, caption string) error {
	r := a.t.r
	f, _, err := r.space(a.t.admin).OpenFile(path, a.t.workdir, r.cfg.AttachmentMaxBytes)
	if err != nil {
		return r.workError(err)
	}
	f.Close()
	_, err = a.call(ctx, toolCall{Tool: core.ToolSendFile, Path: path, Caption: caption}, false)
	return err
}

func (a *relayedActions) Notify(ctx context.Context, text string) error {
	_, err := a.call(ctx, toolCall{Tool: core.ToolNotify, Text: text}, false)
	return err
}

func (a *relayedActions) Ask(ctx context.Context, question string, options []string) (string, error) {
	return a.call(ctx, toolCall{Tool: core.ToolAskUser, Question: question, Options: slices.Clone(options)}, true)
}

func (a *relayedActions) Schedule(ctx context.Context, when, message string) (string, error) {
	return a.call(ctx, toolCall{Tool: core.ToolSchedule, When: when, Message: message}, false)
}

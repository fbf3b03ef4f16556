package configured

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/acp"
)

// ACPVersion is the Agent Client Protocol version mode acp speaks.
const ACPVersion = acp.ProtocolVersion

// acpState is what a mode acp plugin learnt from its agent: the modes it
// announced for its last session, and its slash commands by workdir (an
// agent adds a project's own commands to its built-in ones) and the last
// it announced anywhere.
type acpState struct {
	mu       sync.Mutex
	modes    []core.Mode
	commands map[string][]acp.Command
	last     []acp.Command
}

// maxCommandDirs bounds the workdirs whose commands are kept.
const maxCommandDirs = 256

var (
	_ core.Warmer          = (*Plugin)(nil)
	_ core.ModeProvider    = (*Plugin)(nil)
	_ core.CommandProvider = (*Plugin)(nil)
)

// replayProtocol reads a recorded ACP session, answering nothing.
func (p *Plugin) replayProtocol(link *cliproc.Link) cliproc.Protocol {
	return acp.New(core.Turn{Ask: true}, acp.Options{Name: p.spec.Name, ToolOutput: true}, link)
}

// protocol is turn t's conversation with the agent.
func (p *Plugin) protocol(t core.Turn) func(*cliproc.Link) cliproc.Protocol {
	return func(link *cliproc.Link) cliproc.Protocol {
		readOnly, _ := p.readOnlyMode()
		c := acp.New(t, acp.Options{Name: p.spec.Name, Model: t.Model, Mode: agentMode(t.Mode), ReadOnlyMode: readOnly, SetModel: t.Model, ToolOutput: true,
			Announced: p.announced, Commands: func(cmds []acp.Command) { p.announcedCommands(t.Workdir, cmds) }}, link)
		c.Start()
		return c
	}
}

// announced keeps the modes the agent announced, for /mode: those the
// entry does not list as safe (safe_modes) are for admins only, and one
// named as a mode of the bot's own is offered under another name
// (modeName).
func (p *Plugin) announced(s acp.Session) {
	modes := make([]core.Mode, 0, len(s.Modes))
	for _, m := range s.Modes {
		safe := slices.ContainsFunc(p.spec.SafeModes, func(s string) bool { return strings.EqualFold(s, m.ID) })
		modes = append(modes, core.Mode{Name: modeName(m.ID), Help: firstNonEmpty(m.Description, m.Name), Bypass: !safe})
	}
	p.acp.mu.Lock()
	p.acp.modes = modes
	p.acp.mu.Unlock()
}

// agentModePrefix begins the name /mode offers an agent's mode by when
// the agent names it as one of the bot's own modes (ask, auto, default):
// Qwen Code's "default" is /mode agent-default, and /mode default stays
// the bot's.
const agentModePrefix = "agent-"

// modeName is the name /mode offers the agent's mode id by.
func modeName(id string) string {
	if core.IsBotMode(id) {
		return agentModePrefix + id
	}
	return id
}

// agentMode is the agent's id of the mode /mode named name.
func agentMode(name string) string {
	if id, ok := strings.CutPrefix(name, agentModePrefix); ok && core.IsBotMode(id) {
		return id
	}
	return name
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Modes are the modes the agent announced for its last session (none
// before its first, nor for a mode other than acp).
func (p *Plugin) Modes() []core.Mode {
	p.acp.mu.Lock()
	defer p.acp.mu.Unlock()
	return p.acp.modes
}

// Warm starts the agent of t's conversation's next turn, initialized and
// waiting for the message (core.Warmer); only mode acp can wait.
func (p *Plugin) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	if _, ok := p.readOnlyMode(); p.spec.Mode != ModeACP || t.ReadOnly && !ok {
		return nil, core.ErrNoWarm
	}
	return p.cli.Open(life, t, p.spec.Argv(t), p.protocol(t))
}

// Probe starts the agent, asks it what it is and, when workdir is set
// and the agent lists sessions, workdir's sessions (session/list).
func (p *Plugin) Probe(ctx context.Context, workdir string) (*acp.Probe, error) {
	probe, proto := acp.NewProbe(workdir)
	_, err := p.cli.Converse(ctx, core.Turn{Workdir: workdir}, p.spec.Argv(core.Turn{}), proto, func(core.Event) {})
	if err != nil && !probe.Initialized {
		return probe, err
	}
	return probe, nil
}

// acpConversations are the agent's sessions in workdir, where it lists
// them; none where it does not.
func (p *Plugin) acpConversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	probe, err := p.Probe(ctx, workdir)
	if err != nil {
		// Not installed, or not signed in: its turns say so; the list
		// is only empty (jakebot doctor says why).
		p.logger.Warn("the agent could not list its sessions", "err", err)
		return nil, nil
	}
	out := make([]core.ConversationInfo, 0, len(probe.Sessions))
	for _, s := range probe.Sessions {
		out = append(out, core.ConversationInfo{SessionID: s.ID, Title: s.Title, Updated: s.Updated})
	}
	return out, nil
}

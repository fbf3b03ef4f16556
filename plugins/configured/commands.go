package configured

import (
	"context"
	"fmt"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/internal/acp"
)

// cmdCommands is mode acp's own command: the agent's slash commands.
const cmdCommands core.CommandName = "commands"

// Commands is mode acp's /<id> commands, which lists the slash commands
// the agent announced (core.CommandProvider); other modes have none.
func (p *Plugin) Commands() []core.CommandSpec {
	if p.spec.Mode != ModeACP {
		return nil
	}
	return []core.CommandSpec{{Name: cmdCommands, Words: []string{"commands"}, Scope: core.ScopeConversation,
		Help: "list " + p.spec.Name + "'s own slash commands, which you type as //command"}}
}

// RunCommand answers /<id> commands: the commands the agent announced in
// conv's workdir, else the last it announced anywhere.
func (p *Plugin) RunCommand(_ context.Context, conv core.Conversation, cmd core.Command) (string, error) {
	if cmd.Name != cmdCommands {
		return "", core.Errorf("command %q is not implemented", cmd.Name)
	}
	p.acp.mu.Lock()
	cmds, ok := p.acp.commands[conv.Workdir]
	if !ok {
		cmds = p.acp.last
	}
	p.acp.mu.Unlock()
	if cmds == nil {
		return p.spec.Name + " announces its commands once it has run a turn: start a conversation, then ask again.", nil
	}
	if len(cmds) == 0 {
		return p.spec.Name + " announced no commands.", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s's commands (type them with two slashes, as `//name`):", p.spec.Name)
	for _, c := range cmds {
		usage := "//" + c.Name
		if c.Hint != "" {
			usage += " <" + c.Hint + ">"
		}
		fmt.Fprintf(&b, "\n`%s` — %s", usage, core.Shorten(c.Description, 120))
	}
	return b.String(), nil
}

// announcedCommands keeps the commands the agent announced in workdir.
func (p *Plugin) announcedCommands(workdir string, cmds []acp.Command) {
	p.acp.mu.Lock()
	defer p.acp.mu.Unlock()
	if p.acp.commands == nil {
		p.acp.commands = map[string][]acp.Command{}
	}
	if _, ok := p.acp.commands[workdir]; !ok && len(p.acp.commands) >= maxCommandDirs {
		clear(p.acp.commands)
	}
	p.acp.commands[workdir], p.acp.last = cmds, cmds
}

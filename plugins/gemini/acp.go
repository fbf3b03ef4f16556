package gemini

import (
	"cmp"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/acp"
)

// AskUserTool is the name Gemini CLI's model knows the bot's ask_user
// tool by (as mcp_jakebot_ask_the_user): see acpOptions.
const AskUserTool = "ask_the_user"

// acpArgs are the arguments of `gemini --acp` for t.
func (p *Plugin) acpArgs(t core.Turn) []string {
	args := []string{"--acp"}
	switch {
	case t.ReadOnly:
		// Set last (readOnlyArgs).
	case !t.Ask:
		// Nobody answers: the configured mode decides alone, and what it
		// would ask about is denied (see acp.Client), as headless.
		args = append(args, "--approval-mode", cmp.Or(t.Mode, p.cfg.ApprovalMode))
	case t.Mode != "":
		// Without a mode of its own the ACP agent asks about everything.
		args = append(args, "--approval-mode", t.Mode)
	case p.cfg.ApprovalMode == "yolo":
		// The operator's choice to be asked nothing.
		args = append(args, "--approval-mode", "yolo")
	}
	if model := cmp.Or(t.Model, p.cfg.Model); model != "" {
		args = append(args, "--model", model)
	}
	return p.readOnlyArgs(t, args)
}

// acp returns the protocol of t's turn through ACP (the shared client),
// with what is the pinned CLI's own: it goes on replaying a loaded
// session after answering (SettleReplay), and its session files need
// watching (see guardLoad) and keeping a stopped turn (keepInterrupted).
func (p *Plugin) acp(t core.Turn) func(*cliproc.Link) cliproc.Protocol {
	return func(link *cliproc.Link) cliproc.Protocol {
		a := acp.New(t, p.acpOptions(t), link)
		a.Start()
		return a
	}
}

func (p *Plugin) acpOptions(t core.Turn) acp.Options {
	return acp.Options{
		Name: p.Name(), Model: cmp.Or(t.Model, p.cfg.Model), ErrorText: apiMessage, SettleReplay: true, ReadOnlyMode: readOnlyMode,
		// Over ACP Gemini CLI hides every tool named ask_user (it has one
		// of its own, which a client cannot show), an MCP server's too.
		ToolNames: map[string]string{core.ToolAskUser: AskUserTool},
		// Over ACP Gemini CLI asks before it writes its todo list, which
		// changes nothing but its own plan: denied under APPROVALS=auto,
		// a question about nothing under ask. Its calls' ids start with
		// the tool's name.
		Unasked: func(id string) bool { return strings.HasPrefix(id, "write_todos__") },
		Limit:   func(msg string) (core.UsageWindow, bool) { return quotaWindow(msg, p.cfg.Clock.Now()) },
		Fresh:   cliproc.Unchanged(func() sessionStamp { return p.stampSession(t) }),
		Loaded:  func() { p.dropLoadLeftovers(t) },
		MarkTurn: func(id string, t core.Turn) func(string) error {
			mark := p.markChat(t.Workdir, id)
			return func(partial string) error { return p.keepInterrupted(mark, t, partial) }
		},
	}
}

// replayACP is the protocol that reads a recorded `gemini --acp` session.
func replayACP(workdir string) func(*cliproc.Link) cliproc.Protocol {
	return func(link *cliproc.Link) cliproc.Protocol {
		return acp.New(core.Turn{Workdir: workdir, Ask: true}, acp.Options{Name: "Gemini CLI", ErrorText: apiMessage, SettleReplay: true}, link)
	}
}

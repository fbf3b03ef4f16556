package claude

import (
	"slices"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

var _ core.ReadOnlyPlugin = (*Plugin)(nil)

// ReadOnlyMeans says how a read-only turn (core.Turn.ReadOnly) keeps
// Claude Code from writing: plan mode with only its reading tools.
func (p *Plugin) ReadOnlyMeans() (string, bool) {
	return "Claude Code's plan mode, with only its Read, Grep and Glob tools", true
}

// readTools are the only built-in tools of a read-only turn (--tools):
// none writes or runs a command. Plan mode alone is not enough: it asks
// before a Write (which the chat could approve), lets a Bash command run
// that its own safety check passes, and ExitPlanMode approved leaves it.
// A tool left out is not offered to the model, and a call of it is
// answered "No such tool available: Write. Write is disabled for this
// session, in subagents as well as here." The bot's own tools (MCP) stay.
var readTools = []string{"Read", "Grep", "Glob"}

// writeTools are denied besides (--disallowedTools), so that a --tools or
// --allowedTools among CLAUDE_ARGS cannot bring one back: a deny rule
// wins over every allow.
var writeTools = []string{"Bash", "PowerShell", "Write", "Edit", "MultiEdit", "NotebookEdit", "ExitPlanMode", "EnterWorktree"}

// readOnlyArgs are the arguments that make t's turn read-only; a turn
// that may ask keeps the agent's own question (AskUserQuestion).
func readOnlyArgs(t core.Turn) []string {
	tools := readTools
	if t.Ask {
		tools = append(slices.Clip(tools), "AskUserQuestion")
	}
	return []string{"--permission-mode", "plan", "--tools", strings.Join(tools, ","),
		"--disallowedTools", strings.Join(writeTools, ",")}
}

// withoutBypass is args without the flags that skip every permission
// check, which a read-only turn must not inherit from CLAUDE_ARGS.
func withoutBypass(args []string) []string {
	return slices.DeleteFunc(slices.Clone(args), func(a string) bool {
		return a == "--dangerously-skip-permissions" || a == "--allow-dangerously-skip-permissions"
	})
}

// readOnlyDenial is the answer to a request of a read-only turn's CLI to
// run one of writeTools.
const readOnlyDenial = "this turn is read-only: no tool that writes, runs a command or leaves plan mode may run"

package gemini

import (
	"slices"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

var _ core.ReadOnlyPlugin = (*Plugin)(nil)

// readOnlyMode is the Gemini CLI's read-only approval mode, by the name
// --approval-mode and its ACP session (which announces it as "Read-only
// mode") both know it by.
const readOnlyMode = "plan"

// ReadOnlyMeans says how a read-only turn (core.Turn.ReadOnly) keeps the
// Gemini CLI from writing: its plan mode, every permission it asks for
// refused. Plan mode offers no shell ("Tool \"run_shell_command\" not
// found in registry") and refuses a write outside its plans folder under
// ~/.gemini ("Access denied: plan path (…) must be within the designated
// plans directory (…)"); but it asks before exit_plan_mode, which,
// approved, switches the session to its default mode, where writes are
// only asked about: the ACP client refuses every request of a read-only
// turn (acp.Options.ReadOnlyMode).
func (p *Plugin) ReadOnlyMeans() (string, bool) {
	return "Gemini CLI's plan mode, every approval refused", true
}

// readOnlyArgs ends args with GEMINI_ARGS and, for a read-only turn, plan
// mode, without GEMINI_ARGS' own approval mode or -y (yolo), which the CLI
// refuses beside --approval-mode ("Cannot use both --yolo (-y) and
// --approval-mode together").
func (p *Plugin) readOnlyArgs(t core.Turn, args []string) []string {
	if !t.ReadOnly {
		return append(args, p.cfg.Args...)
	}
	for i := 0; i < len(p.cfg.Args); i++ {
		switch a := p.cfg.Args[i]; {
		case a == "--approval-mode":
			i++ // and its value
		case a == "-y" || a == "--yolo" || strings.HasPrefix(a, "--yolo=") || strings.HasPrefix(a, "--approval-mode="):
		default:
			args = append(args, a)
		}
	}
	return append(slices.Clip(args), "--approval-mode", readOnlyMode)
}

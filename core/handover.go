package core

import (
	"regexp"
	"strings"
)

// Handover is implemented by plugins whose CLI continues a session in a
// terminal: ResumeCommand is the command that does, such as
// "claude --resume <id>".
type Handover interface {
	ResumeCommand(session string) string
}

// terminalLine is the shell line that continues conv's session in a
// terminal — "cd /src/app && claude --resume <id>" — said to be run on its
// runner for a conversation there; "" when it has no session yet or its
// plugin cannot say.
func (r *Router) terminalLine(conv Conversation) string {
	p, ok := r.cfg.Plugins.Get(conv.Plugin)
	h, can := p.(Handover)
	if !ok || !can || conv.SessionID == "" {
		return ""
	}
	line := "cd " + shellQuote(conv.Workdir) + " && " + h.ResumeCommand(conv.SessionID)
	if conv.Runner != "" {
		return line + " (on " + conv.Runner + ")"
	}
	return line
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell, leaving plain words as they are.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

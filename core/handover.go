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
// runner for a conversation there; "" when it has no session yet, its
// plugin cannot say, or its session id (as a CLI or a runner reported it)
// is not of a session id's form: the user pastes the line into a shell.
func (r *Router) terminalLine(conv Conversation) string {
	p, ok := r.cfg.Plugins.Get(conv.Plugin)
	h, can := p.(Handover)
	if !ok || !can || !terminalSessionID.MatchString(conv.SessionID) {
		return ""
	}
	if c, checks := p.(SessionIDChecker); checks && c.CheckSessionID(conv.SessionID) != nil {
		return ""
	}
	line := "cd " + shellQuote(conv.Workdir) + " && " + h.ResumeCommand(shellQuote(conv.SessionID))
	if conv.Runner != "" {
		return line + " (on " + conv.Runner + ")"
	}
	return line
}

// terminalSessionID is the form of a session id put in a terminal line:
// the CLIs' ids (UUIDs, "thread-…") and more, but no shell syntax, no
// space and no leading dash (an option).
var terminalSessionID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,199}$`)

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell, leaving plain words as they are.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

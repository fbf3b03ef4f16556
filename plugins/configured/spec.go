package configured

import (
	"regexp"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Mode says how a configured CLI's output is read.
type Mode string

const (
	// ModeJSONL reads one JSON object per line through a Mapping.
	ModeJSONL Mode = "jsonl"
	// ModePlain streams stdout lines as text.
	ModePlain Mode = "plain"
	// ModePTY runs the CLI in a pseudo-terminal and streams the settled
	// screen text.
	ModePTY Mode = "pty"
	// ModeACP speaks the Agent Client Protocol on the CLI's stdin and
	// stdout (see acp.go).
	ModeACP Mode = "acp"
)

// Placeholders an argument may be.
const (
	PhMessage = "message"
	PhWorkdir = "workdir"
	PhResume  = "resume"
)

// Spec describes one configured CLI. Load builds it from PLUGINS_FILE and
// checks it; a Spec built in code is not checked.
type Spec struct {
	ID   string
	Name string
	Bin  string
	Args []Arg
	Mode Mode
	// JSONL maps fields of a jsonl stream to text, session id and errors.
	JSONL Mapping
	// Resume finds the session id in plain or pty output: its first
	// capture group. The last match wins.
	Resume *regexp.Regexp
	// Environ is the environment the CLI starts from; nil means the
	// bot's own (see cliproc.Spec).
	Environ []string
	// Env is added to Environ.
	Env []string
	// State are the folders and files the CLI keeps its own state in,
	// which its sandbox shows it read-write: "~/" starts a path in the
	// CLI's home, and $VAR is the CLI's variable.
	State []string
	// Sandbox is the wall the CLI runs behind; nil is none.
	Sandbox *cliproc.Sandbox
	// Term is the pseudo-terminal's size; Settle is how often its screen
	// is checked for settled text.
	Term   cliproc.TermSize
	Settle time.Duration
	// Code shows plain or pty output as a code block (monospace) instead
	// of markdown text.
	Code bool
	// Grace is how long the CLI has to exit after SIGTERM.
	Grace time.Duration
	// VersionArgs print the CLI's version, for jakebot doctor.
	VersionArgs []string
	// SafeModes, for mode acp, are the modes the agent announces that
	// anyone may choose (safe_modes): every other is for admins only
	// (core.Mode.Bypass), since the bot cannot tell which of an agent's
	// modes run tools with nobody approving them.
	SafeModes []string
	// ReadOnlyMode, for mode acp, is the mode the agent announces that
	// reads but cannot write (read_only_mode), for read-only turns
	// (core.Turn.ReadOnly); empty means plan, once the agent has
	// announced a mode of that id.
	ReadOnlyMode string
	// Source is where the entry was defined, "file:line".
	Source string
}

// Arg is one entry of an argument template: a literal, a placeholder that
// becomes exactly one argument, or an optional group of them that is left
// out when any placeholder in it is empty.
type Arg struct {
	Literal     string
	Placeholder string
	Group       []Arg
}

// KeepsSessions reports whether the CLI's session id can be found, so that
// the next turn resumes it.
func (s *Spec) KeepsSessions() bool {
	return s.Mode == ModeACP || s.Resume != nil || len(s.JSONL.Session) > 0
}

// Argv returns the CLI's arguments for a turn. No shell is involved: each
// placeholder becomes one argument whatever it contains. A message that
// starts with a dash gets a leading space unless the template puts "--"
// right before it, so the CLI cannot take it for an option.
func (s *Spec) Argv(t core.Turn) []string {
	msg := strings.ReplaceAll(t.Prompt, "\x00", "")
	vals := map[string]string{PhMessage: msg, PhWorkdir: t.Workdir, PhResume: t.SessionID}
	return expand(nil, s.Args, vals)
}

func expand(out []string, args []Arg, vals map[string]string) []string {
	for _, a := range args {
		switch {
		case a.Group != nil:
			if groupFilled(a.Group, vals) {
				out = expand(out, a.Group, vals)
			}
		case a.Placeholder == PhMessage:
			v := vals[PhMessage]
			if strings.HasPrefix(v, "-") && (len(out) == 0 || out[len(out)-1] != "--") {
				v = " " + v
			}
			out = append(out, v)
		case a.Placeholder != "":
			out = append(out, vals[a.Placeholder])
		default:
			out = append(out, a.Literal)
		}
	}
	return out
}

func groupFilled(args []Arg, vals map[string]string) bool {
	for _, a := range args {
		if a.Placeholder != "" && vals[a.Placeholder] == "" {
			return false
		}
	}
	return true
}

// tokenRE is what a session id from a CLI's output or a /resume command
// must look like before it becomes an argument: no leading dash, no space.
var tokenRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:+=@-]{0,199}$`)

package cliproc

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// Description is what a built-in CLI's plugin says of itself once, and
// all it says for its Base (Settings.Base makes it): the rest of the
// plugin is its CLI's arguments, protocol, modes and history.
type Description struct {
	// ID is the plugin's id, as the chat names it ("claude"). In upper
	// case it begins the plugin's variables: the install hint names its
	// binary's (CLAUDE_BIN).
	ID string
	// CLI is the CLI the plugin runs: its display Name, its default Bin,
	// and what is its own (Env, State, Clean, ToolTokenFromEnv). How to
	// install it follows from NPM; what the operator set (Settings) and
	// the logger are added by Settings.Base.
	CLI CLI
	// NPM is the npm package that installs the CLI.
	NPM string
	// SessionNoun is what the CLI calls a session id, for the error that
	// refuses one ("Claude Code session id").
	SessionNoun string
	// Resume is the terminal command a session's id follows to resume it
	// ("claude --resume").
	Resume string
	// Modes are the CLI's modes a conversation may switch between
	// (core.ModeProvider); the plugin's arguments pass the turn's on.
	Modes []core.Mode
}

// Talk gives the arguments of turn t's CLI and the protocol the turn
// speaks with it, for Base's Run and Warm.
type Talk func(t core.Turn) (args []string, protocol func(*Link) Protocol)

// Base is the part of a CLI's plugin that is the same for every CLI, for
// the plugin to embed: its id and name (core.Plugin), the CLI it runs (for
// jakebot doctor), its session ids, which are UUIDs (core.SessionIDChecker),
// the command that resumes a session in a terminal (core.Handover), its
// modes (core.ModeProvider), and a turn run or warmed over the CLI's
// protocol (core.Warmer). The plugin adds what is its CLI's own: its
// arguments and protocol (Talk).
// Settings.Base makes one. Its methods are safe for concurrent use.
type Base struct {
	// Proc is the CLI the plugin's turns run.
	Proc *CLI
	// about is the plugin's Description, of which Base answers its id,
	// session noun and resume command.
	about Description
	talk  Talk
}

// Base returns the Base of the plugin d describes, whose turns talk to
// the CLI as talk says: the CLI of d run as s says (see CLI), logging to
// logger.
func (s Settings) Base(d Description, talk Talk, logger *slog.Logger) Base {
	c := d.CLI
	c.Install = fmt.Sprintf("Install it with `npm install -g %s`, or set %s_BIN", d.NPM, strings.ToUpper(d.ID))
	c.Logger = logger
	return Base{Proc: s.cli(c), about: d, talk: talk}
}

var (
	_ core.SessionIDChecker = Base{}
	_ core.Handover         = Base{}
	_ core.Warmer           = Base{}
	_ core.ModeProvider     = Base{}
)

// ID is the plugin's id.
func (b Base) ID() string { return b.about.ID }

// Name is the CLI's display name.
func (b Base) Name() string { return b.Proc.Name }

// CLI is the CLI the plugin runs, as jakebot doctor checks it: its name,
// binary and how to install it.
func (b Base) CLI() CLI { return *b.Proc }

// CheckSessionID accepts a UUID, the only session id the CLI makes.
func (b Base) CheckSessionID(id string) error { return CheckUUID(id, b.about.SessionNoun) }

// Modes are the CLI's modes, as its Description lists them.
func (b Base) Modes() []core.Mode { return slices.Clone(b.about.Modes) }

// ResumeCommand continues session in a terminal.
func (b Base) ResumeCommand(session string) string { return b.about.Resume + " " + session }

// Run runs turn t over the CLI's protocol (CLI.Converse): what talk's
// protocol makes of the CLI's requests and of messages written meanwhile
// is the plugin's; cancelling the turn interrupts it through the
// protocol, so that the partial turn stays in the session.
func (b Base) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	args, protocol := b.talk(t)
	return b.Proc.Converse(ctx, t, args, protocol, emit)
}

// Warm starts the CLI of t's conversation's next turn, its session
// resumed and waiting for the message (core.Warmer).
func (b Base) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	args, protocol := b.talk(t)
	return b.Proc.Open(life, t, args, protocol)
}

package cliproc

import (
	"context"

	"github.com/jake-bot/jake-bot/core"
)

// Base is the part of a CLI's plugin that is the same for every CLI, for
// the plugin to embed: its id and name (core.Plugin), the CLI it runs (for
// jakebot doctor), its session ids, which are UUIDs (core.SessionIDChecker),
// the command that resumes a session in a terminal (core.Handover), and a
// turn run or warmed over the CLI's protocol (core.Warmer). The plugin adds
// what is its CLI's own: its arguments and protocol (Talk) and its modes.
// Its methods are safe for concurrent use.
type Base struct {
	// Proc is the CLI the plugin's turns run, as Settings.CLI makes it.
	Proc *CLI
	// PluginID is the plugin's id, as the chat names it ("claude").
	PluginID string
	// SessionNoun is what the CLI calls a session id, for the error that
	// refuses one ("Claude Code session id").
	SessionNoun string
	// Resume is the terminal command a session's id follows to resume it
	// ("claude --resume").
	Resume string
	// Talk gives the arguments of turn t's CLI and the protocol the turn
	// speaks with it, for Run and Warm.
	Talk func(t core.Turn) (args []string, protocol func(*Link) Protocol)
}

var (
	_ core.SessionIDChecker = Base{}
	_ core.Handover         = Base{}
	_ core.Warmer           = Base{}
)

// ID is the plugin's id.
func (b Base) ID() string { return b.PluginID }

// Name is the CLI's display name.
func (b Base) Name() string { return b.Proc.Name }

// CLI is the CLI the plugin runs, as jakebot doctor checks it: its name,
// binary and how to install it.
func (b Base) CLI() CLI { return *b.Proc }

// CheckSessionID accepts a UUID, the only session id the CLI makes.
func (b Base) CheckSessionID(id string) error { return CheckUUID(id, b.SessionNoun) }

// ResumeCommand continues session in a terminal.
func (b Base) ResumeCommand(session string) string { return b.Resume + " " + session }

// Run runs turn t over the CLI's protocol (CLI.Converse): what Talk's
// protocol makes of the CLI's requests and of messages written meanwhile
// is the plugin's; cancelling the turn interrupts it through the
// protocol, so that the partial turn stays in the session.
func (b Base) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	args, protocol := b.Talk(t)
	return b.Proc.Converse(ctx, t, args, protocol, emit)
}

// Warm starts the CLI of t's conversation's next turn, its session
// resumed and waiting for the message (core.Warmer).
func (b Base) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	args, protocol := b.Talk(t)
	return b.Proc.Open(life, t, args, protocol)
}

package cliproc

import "cmp"

// Settings are what every built-in plugin lets its operator say of its
// CLI. A plugin's Config embeds them under its prefix, so that the
// environment gives them as CLAUDE_BIN, CODEX_ARGS, GEMINI_MODEL and so
// on:
//
//	cliproc.Settings `envPrefix:"CLAUDE_"`
type Settings struct {
	// Bin is the CLI's binary, a path or a name on PATH; empty means the
	// plugin's own (CLI.Bin in its Description).
	Bin string `env:"BIN"`
	// Args are added to the CLI's arguments on every turn.
	Args Args `env:"ARGS"`
	// Model is the model of a turn that names none; empty leaves it to
	// the CLI.
	Model string `env:"MODEL"`
	// Environ and Env are the CLI's environment, as CLI's: the bot's own
	// minus its secrets, and what tests add to it.
	Environ, Env []string
	// Sandbox is the wall the CLI runs behind (SANDBOX); nil is none.
	Sandbox *Sandbox `env:"-"`
}

// cli returns the CLI that c describes (its name, default binary, how to
// install it, what it adds to the environment, its state) run as s says:
// with s.Bin when set, from s.Environ, with s.Env added after c.Env,
// behind s.Sandbox.
func (s Settings) cli(c CLI) *CLI {
	c.Bin = cmp.Or(s.Bin, c.Bin)
	c.Environ = s.Environ
	c.Sandbox = s.Sandbox
	c.Env = append(c.Env[:len(c.Env):len(c.Env)], s.Env...)
	return &c
}

package codex

import (
	"cmp"
	"log/slog"
	"regexp"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Config configures the plugin; the bot fills it from the environment.
type Config struct {
	// Settings are CODEX_BIN (by default codex), CODEX_ARGS and
	// CODEX_MODEL, and the CLI's environment.
	cliproc.Settings `envPrefix:"CODEX_"`
	// Sandbox is the thread's sandbox: read-only, workspace-write or
	// danger-full-access; empty is workspace-write (New). Where the chat
	// approves nothing (APPROVALS=auto) the policy is never, so read-only
	// would make every edit fail.
	Sandbox string `env:"CODEX_SANDBOX"`
	// ApprovalPolicy is the app-server's approvalPolicy when the chat
	// answers questions (APPROVALS=ask): untrusted asks before every
	// command not known to be read-only, on-request when the model wants
	// to leave the sandbox, never asks nothing. Otherwise it is never.
	// Empty is untrusted (New).
	ApprovalPolicy string `env:"CODEX_APPROVAL_POLICY"`
	// Home is where Codex keeps its state; empty means $CODEX_HOME, else
	// ~/.codex.
	Home string `env:"CODEX_HOME"`
}

// Plugin runs Codex. It is safe for concurrent use.
type Plugin struct {
	cliproc.Base
	cfg Config
}

// New returns the plugin. A nil logger discards.
func New(cfg Config, logger *slog.Logger) *Plugin {
	cfg.Sandbox = cmp.Or(cfg.Sandbox, "workspace-write")
	cfg.ApprovalPolicy = cmp.Or(cfg.ApprovalPolicy, "untrusted")
	p := &Plugin{cfg: cfg}
	p.Base = cfg.Base(description, p.talk, logger)
	return p
}

// description is what the plugin says of itself and its CLI, once.
// Codex's thread ids are UUIDs (version 7).
var description = cliproc.Description{ID: "codex", NPM: "@openai/codex",
	SessionNoun: "Codex thread id", Resume: "codex resume",
	CLI: cliproc.CLI{Name: "Codex", Bin: "codex", State: stateDir.Whole, Clean: stripNoise, ToolTokenFromEnv: true},
	// Modes: Codex's sandbox levels (--sandbox), which bound what its
	// commands may touch.
	Modes: []core.Mode{
		{Name: "read-only", Help: "commands may read files but change nothing"},
		{Name: "workspace-write", Help: "commands may change files in the workdir only"},
		{Name: "danger-full-access", Help: "commands may change anything, network included", Bypass: true},
	}}

// level is the sandbox level of turn t: its mode's (empty: the configured
// one), or read-only for a read-only turn, whatever its mode. Inside a
// sandbox of the bot's that its own cannot nest in (every command would
// fail, ENOSPC), Codex runs without its own: the bot's sandbox bounds
// what its commands reach instead. Not a read-only turn's: its commands
// fail there, reading ones too, rather than write.
func (cfg Config) level(t core.Turn) string {
	switch {
	case t.ReadOnly:
		return "read-only"
	case !cfg.Settings.Sandbox.Nests():
		return "danger-full-access"
	}
	return cmp.Or(t.Mode, cfg.Sandbox)
}

// stateDir is where Codex keeps its state: $CODEX_HOME, else ~/.codex.
// Its sandbox shows it the folder whole: its threads of every workdir,
// its login and its index of them share it.
var stateDir = cliproc.StateDir{Var: "CODEX_HOME", Dot: ".codex"}

// StateDir returns where Codex keeps its state: cfg.Home, else
// $CODEX_HOME as getenv reads it, else ~/.codex. It fails when none of
// them, nor HOME, is set.
func (cfg Config) StateDir(getenv func(string) string) (string, error) {
	return stateDir.Find(cfg.Home, getenv)
}

// talk is how every turn (Run, Warm) talks to Codex: through `codex
// app-server`, where its approval requests become questions when the chat
// answers them (APPROVALS=ask; otherwise its policy is never, and the
// sandbox alone decides), messages written meanwhile reach the turn
// (turn/steer), and cancelling it sends turn/interrupt, so the thread
// keeps the partial turn.
func (p *Plugin) talk(t core.Turn) ([]string, func(*cliproc.Link) cliproc.Protocol) {
	return p.appServerArgs(t), p.appServer(t)
}

// approvalPolicy is the app-server's approvalPolicy for t: the
// configured one where the chat answers questions, else never. A
// read-only turn's is never too: on-request or untrusted would let the
// model ask to run a command outside the sandbox, and the chat approve.
func (p *Plugin) approvalPolicy(t core.Turn) string {
	if t.Ask && !t.ReadOnly {
		return p.cfg.ApprovalPolicy
	}
	return "never"
}

// noise matches stderr lines Codex prints on every run.
var noise = regexp.MustCompile(`(?m)^(Reading additional input from stdin\.\.\.|WARNING: proceeding, even though we could not create PATH aliases.*)\n?`)

// stripNoise removes the lines every run prints and a Rust backtrace
// (printed when RUST_BACKTRACE is set), keeping the error itself.
func stripNoise(s string) string {
	if i := strings.Index(s, "Stack backtrace:"); i >= 0 {
		s = s[:i]
	}
	return noise.ReplaceAllString(s, "")
}

var _ core.ReadOnlyPlugin = (*Plugin)(nil)

// ReadOnlyMeans says how a read-only turn (core.Turn.ReadOnly) keeps Codex
// from writing: its read-only sandbox, with an approval policy of never,
// so that nothing escalates out of it.
func (p *Plugin) ReadOnlyMeans() (string, bool) {
	return "Codex's read-only sandbox, approvals never", true
}

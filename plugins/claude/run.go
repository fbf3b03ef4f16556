package claude

import (
	"cmp"
	"crypto/sha256"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Config configures the plugin; the bot fills it from the environment.
type Config struct {
	// Settings are CLAUDE_BIN (by default claude), CLAUDE_ARGS and
	// CLAUDE_MODEL, and the CLI's environment.
	cliproc.Settings `envPrefix:"CLAUDE_"`
	PermissionMode   string `env:"CLAUDE_PERMISSION_MODE" envDefault:"acceptEdits"`
	// ConfigDir is where Claude Code keeps its state; empty means
	// $CLAUDE_CONFIG_DIR, else ~/.claude.
	ConfigDir string `env:"CLAUDE_CONFIG_DIR"`
}

// Plugin runs Claude Code. It is safe for concurrent use.
type Plugin struct {
	cliproc.Base
	cfg Config
}

// New returns the plugin. A nil logger discards.
func New(cfg Config, logger *slog.Logger) *Plugin {
	p := &Plugin{cfg: cfg}
	p.Base = cfg.Base(description, p.talk, logger)
	return p
}

// description is what the plugin says of itself and its CLI, once.
var description = cliproc.Description{ID: "claude", NPM: "@anthropic-ai/claude-code",
	SessionNoun: "Claude Code session id", Resume: "claude --resume",
	CLI: cliproc.CLI{Name: "Claude Code", Bin: "claude", State: state, ToolTokenFromEnv: true},
	// Modes: Claude Code's permission modes (--permission-mode).
	Modes: []core.Mode{
		{Name: "plan", Help: "reads and plans, changes nothing until the plan is approved"},
		{Name: "acceptEdits", Help: "edits files without asking; asks before other tools"},
		{Name: "dontAsk", Help: "runs only the tools allowed beforehand, denies the rest"},
		{Name: "bypassPermissions", Help: "runs every tool without asking", Bypass: true},
	}}

// stateDir is where Claude Code keeps its state, its config folder:
// $CLAUDE_CONFIG_DIR, else ~/.claude.
var stateDir = cliproc.StateDir{Var: "CLAUDE_CONFIG_DIR", Dot: ".claude"}

// StateDir returns where Claude Code keeps its state: cfg.ConfigDir, else
// $CLAUDE_CONFIG_DIR as getenv reads it, else ~/.claude. It fails when
// none of them, nor HOME, is set.
func (cfg Config) StateDir(getenv func(string) string) (string, error) {
	return stateDir.Find(cfg.ConfigDir, getenv)
}

// state is what Claude Code keeps of its own, which its sandbox shows it:
// its config folder (stateDir; ~/.claude.json beside ~/.claude), of whose
// projects only the workdir's (its sessions) when the folder's name is
// not shortened.
func state(getenv func(string) string, workdir string) []cliproc.StatePath {
	dir, err := stateDir.Find("", getenv)
	if err != nil {
		return nil
	}
	var out []cliproc.StatePath
	if getenv(stateDir.Var) == "" {
		out = append(out, cliproc.StatePath{Path: filepath.Join(getenv("HOME"), ".claude.json"), File: true, Seed: "{}"})
	}
	out = append(out, cliproc.StatePath{Path: dir})
	if name := ProjectDirName(workdir); len(name) <= maxNameLen {
		projects := filepath.Join(dir, "projects")
		out = append(out, cliproc.StatePath{Path: projects, Empty: true}, cliproc.StatePath{Path: filepath.Join(projects, name)})
	}
	return out
}

// Args returns the CLI's arguments for a turn. Every turn speaks the
// control protocol: the message goes on stdin as stream-json (the only
// way images travel), so the CLI can start before it (warm), be
// interrupted keeping its partial turn, and take messages written while
// it works, echoing each as it takes it in. A turn that may ask has its
// permission requests come to the bot.
func (p *Plugin) Args(t core.Turn) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
		"--input-format", "stream-json", "--replay-user-messages"}
	if t.Ask {
		args = append(args, "--permission-prompt-tool", "stdio")
	}
	if t.SessionID != "" {
		args = append(args, "--resume", t.SessionID)
	}
	if mode := cmp.Or(t.Mode, p.cfg.PermissionMode); mode != "" && !t.ReadOnly {
		args = append(args, "--permission-mode", mode)
	}
	if model := cmp.Or(t.Model, p.cfg.Model); model != "" {
		args = append(args, "--model", model)
	}
	if t.MaxCostUSD > 0 {
		// The CLI counts its own cost and stops the turn there.
		args = append(args, "--max-budget-usd", strconv.FormatFloat(t.MaxCostUSD, 'f', -1, 64))
	}
	args = append(args, mcpArgs(t.Tools)...)
	if t.ReadOnly {
		// Last, so that they win over CLAUDE_ARGS.
		args = append(args, withoutBypass(p.cfg.Args)...)
		return append(args, readOnlyArgs(t)...)
	}
	return append(args, p.cfg.Args...)
}

// talk is how every turn (Run) talks to Claude Code: over its control
// protocol, where permission requests become questions (t.Ask), messages
// written meanwhile reach the turn (t.Inbox), and cancelling the turn
// interrupts it, so that the partial turn stays in the session; the CLI
// is killed only if it has not ended cliproc.InterruptGrace later. Warm
// starts it before its message comes: Claude Code starting up is most of
// a short turn.
func (p *Plugin) talk(t core.Turn) ([]string, func(*cliproc.Link) cliproc.Protocol) {
	return p.Args(t), p.protocol(t)
}

// sessionStamp is what a session's transcript held: its size and a hash
// of its end. Not its modification time: a CLI resuming the session
// touches the file without changing it.
type sessionStamp struct {
	size int64
	tail [sha256.Size]byte
}

// stampSession stamps t's session transcript; a new session has none.
func (p *Plugin) stampSession(t core.Turn) sessionStamp {
	if t.SessionID == "" {
		return sessionStamp{}
	}
	dirs, err := p.projectDirs(t.Workdir)
	if err != nil {
		return sessionStamp{}
	}
	for _, dir := range dirs {
		f, err := os.Open(filepath.Join(dir, t.SessionID+".jsonl"))
		if err != nil {
			continue
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return sessionStamp{}
		}
		const tailBytes = 4 << 10
		buf := make([]byte, min(fi.Size(), tailBytes))
		n, _ := f.ReadAt(buf, fi.Size()-int64(len(buf)))
		return sessionStamp{size: fi.Size(), tail: sha256.Sum256(buf[:n])}
	}
	return sessionStamp{}
}

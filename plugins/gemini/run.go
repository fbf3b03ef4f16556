package gemini

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/internal/images"
)

// Config configures the plugin; the bot fills it from the environment.
type Config struct {
	// Settings are GEMINI_BIN (by default gemini), GEMINI_ARGS and
	// GEMINI_MODEL, and the CLI's environment.
	cliproc.Settings `envPrefix:"GEMINI_"`
	// ApprovalMode is --approval-mode: default, auto_edit, yolo or plan,
	// for the turns nobody is asked in (APPROVALS=auto). There every
	// decision that would ask the user is a denial, as headless, so
	// default allows no edits and auto_edit no shell commands. Empty is
	// auto_edit (New).
	ApprovalMode string `env:"GEMINI_APPROVAL_MODE"`
	// Home is the folder that holds .gemini; empty means
	// $GEMINI_CLI_HOME, else the user's home.
	Home string `env:"GEMINI_CLI_HOME"`
	// Clock tells the minute a session is loaded in (see guardLoad);
	// nil means the system's.
	Clock core.Clock
}

// Plugin runs the Gemini CLI. It is safe for concurrent use.
type Plugin struct {
	cliproc.Base
	cfg Config
}

var _ core.Warmer = (*Plugin)(nil)

// New returns the plugin. A nil logger discards.
func New(cfg Config, logger *slog.Logger) *Plugin {
	cfg.ApprovalMode = cmp.Or(cfg.ApprovalMode, "auto_edit")
	cfg.Clock = cmp.Or[core.Clock](cfg.Clock, core.SystemClock{})
	p := &Plugin{cfg: cfg}
	p.Base = cfg.Base(description, p.talk, logger)
	return p
}

// description is what the plugin says of itself and its CLI, once.
// Headless runs refuse an untrusted folder (exit 55); the router only
// runs turns in workdirs inside the allowed roots, so it trusts them.
var description = cliproc.Description{ID: "gemini", NPM: "@google/gemini-cli",
	SessionNoun: "Gemini CLI session id", Resume: "gemini --resume",
	CLI: cliproc.CLI{Name: "Gemini CLI", Bin: "gemini", Env: []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, State: stateDir.Whole, Clean: stripNoise},
	// Modes: the Gemini CLI's approval modes (--approval-mode).
	Modes: []core.Mode{
		{Name: "plan", Help: "reads and plans, changes nothing"},
		{Name: "auto_edit", Help: "edits files without asking; asks before other tools"},
		{Name: "yolo", Help: "runs every tool without asking", Bypass: true},
	}}

// stateDir is where the Gemini CLI keeps its state: the .gemini folder
// in $GEMINI_CLI_HOME, else in the home. Its sandbox shows it the folder
// whole.
var stateDir = cliproc.StateDir{Var: "GEMINI_CLI_HOME", Dot: ".gemini", VarIsHome: true}

// StateDir returns where the CLI keeps its state, <home>/.gemini, where
// home is cfg.Home, else $GEMINI_CLI_HOME as getenv reads it, else $HOME:
// the order the CLI itself follows. It fails when none of them is set.
func (cfg Config) StateDir(getenv func(string) string) (string, error) {
	return stateDir.Find(cfg.Home, getenv)
}

// Args returns the CLI's arguments for a turn. The prompt is given as
// --prompt=… so that a message starting with a dash is never read as a
// flag.
func (p *Plugin) Args(t core.Turn) []string { return p.args(t, nil) }

func (p *Plugin) args(t core.Turn, staged *stagedImages) []string {
	args := []string{"--output-format", "stream-json"}
	if !t.ReadOnly {
		args = append(args, "--approval-mode", cmp.Or(t.Mode, p.cfg.ApprovalMode))
	}
	if model := cmp.Or(t.Model, p.cfg.Model); model != "" {
		args = append(args, "--model", model)
	}
	if t.SessionID != "" {
		args = append(args, "--resume", t.SessionID)
	}
	args = p.readOnlyArgs(t, args)
	if staged != nil {
		return append(args, "--include-directories="+staged.dir, "--prompt="+t.Prompt+staged.refs)
	}
	return append(args, "--prompt="+t.Prompt)
}

// stagedImages are a turn's images copied out of the workdir for the
// one-shot CLI, which takes an image only as an @file it reads itself,
// and skips files git ignores: the uploads folder is ignored.
type stagedImages struct {
	dir  string
	refs string // the @file lines that end the prompt
}

// stageImages copies t's images into a private temporary folder; nil
// when there are none. The caller removes dir.
func stageImages(t core.Turn) (*stagedImages, error) {
	imgs := images.Load(t.Images)
	if len(imgs) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "jakebot-images-")
	if err != nil {
		return nil, fmt.Errorf("stage images: %w", err)
	}
	s := &stagedImages{dir: dir}
	for i, img := range imgs {
		data, err := base64.StdEncoding.DecodeString(img.Base64)
		name := filepath.Join(dir, fmt.Sprintf("%d-%s", i+1, strings.ReplaceAll(filepath.Base(img.Path), " ", "_")))
		if err == nil {
			err = os.WriteFile(name, data, 0o600)
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("stage images: %w", err)
		}
		s.refs += "\n@" + name
	}
	return s, nil
}

// Run runs one turn of the Gemini CLI through the Agent Client Protocol
// (`gemini --acp`), whatever APPROVALS says: its permission requests
// become questions where the chat answers them (t.Ask) and are denied
// otherwise, as the one-shot CLI denies what its mode would ask about;
// cancelling the turn sends session/cancel, so the session keeps the
// partial turn. Only a resumed session that cannot be loaded safely now
// (see guardLoad) runs one-shot with stream-json.
func (p *Plugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	if p.guardLoad(t) {
		return p.Base.Run(ctx, t, emit)
	}
	res, err := p.runOneShot(ctx, t, emit)
	if t.SessionID != "" && err != nil && ctx.Err() == nil && strings.Contains(err.Error(), noSession) {
		// A session the CLI never saved (its first turn was stopped
		// before the model answered) cannot be resumed: go on in a new
		// one rather than fail every turn of the conversation.
		emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockWarning,
			Text: "Gemini CLI has no saved session " + t.SessionID + " to resume; this turn starts a new one."}))
		t.SessionID = ""
		return p.runOneShot(ctx, t, emit)
	}
	return res, err
}

// Warm starts the CLI of t's conversation's next turn, its session loaded
// and waiting for the message (core.Warmer): Gemini CLI takes seconds to
// start.
func (p *Plugin) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	if !p.guardLoad(t) {
		return nil, core.ErrNoWarm
	}
	return p.Base.Warm(life, t)
}

// talk is how a turn that can load its session safely (guardLoad) talks
// to the Gemini CLI: through the Agent Client Protocol (see Run).
func (p *Plugin) talk(t core.Turn) ([]string, func(*cliproc.Link) cliproc.Protocol) {
	return p.acpArgs(t), p.acp(t)
}

// noSession is what the CLI says when asked to resume a session it never
// saved.
const noSession = "No previous sessions found"

// runOneShot runs one turn as `gemini -p … --output-format stream-json`.
func (p *Plugin) runOneShot(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	staged, err := stageImages(t)
	if err != nil {
		return core.TurnResult{}, err
	}
	if staged != nil {
		defer os.RemoveAll(staged.dir)
	}
	return p.Proc.Run(ctx, t, p.args(t, staged), func(link *cliproc.Link) cliproc.Protocol {
		parser := NewParser(link.Emit)
		parser.Workdir, parser.Clock = t.Workdir, p.cfg.Clock
		return parser
	}, emit)
}

// noise matches stderr lines the CLI prints on every headless run, and
// the stack frames of its error reports.
var noise = regexp.MustCompile(`(?m)^(Warning: 256-color support not detected.*|Ripgrep is not available.*|YOLO mode is enabled.*|\s+at .*)\n?`)

// pingRefused matches the report the CLI writes of refusing the bot's
// pings (see acp.started): its header line, the error object's
// indented members and its closing brace.
var pingRefused = regexp.MustCompile(`(?m)^Error handling request \{[^\n]*'jakebot/ping'[^\n]*\n(?:[ \t][^\n]*\n)*\}\n?`)

func stripNoise(s string) string {
	return strings.TrimSpace(noise.ReplaceAllString(pingRefused.ReplaceAllString(s, ""), ""))
}

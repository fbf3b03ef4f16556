package claude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Config configures the plugin; the bot fills it from the environment.
type Config struct {
	Bin            string       `env:"CLAUDE_BIN" envDefault:"claude"`
	Args           cliproc.Args `env:"CLAUDE_ARGS"`
	Model          string       `env:"CLAUDE_MODEL"`
	PermissionMode string       `env:"CLAUDE_PERMISSION_MODE" envDefault:"acceptEdits"`
	// ConfigDir is where Claude Code keeps its state; empty means
	// $CLAUDE_CONFIG_DIR, else ~/.claude.
	ConfigDir string `env:"CLAUDE_CONFIG_DIR"`
	// Env is added to the CLI's environment (tests point it at a fake
	// model server); the bot's own environment is inherited.
	Env []string
}

// Plugin runs Claude Code. It is safe for concurrent use.
type Plugin struct {
	cfg    Config
	logger *slog.Logger
}

var _ core.Plugin = (*Plugin)(nil)
var _ core.ResumeIDChecker = (*Plugin)(nil)

// New returns the plugin. A nil logger discards.
func New(cfg Config, logger *slog.Logger) *Plugin {
	if cfg.Bin == "" {
		cfg.Bin = "claude"
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Plugin{cfg: cfg, logger: logger}
}

func (p *Plugin) ID() string   { return "claude" }
func (p *Plugin) Name() string { return "Claude Code" }

// Args returns the CLI's arguments for a turn. The prompt comes after "--"
// so that a message starting with a dash is never read as a flag.
func (p *Plugin) Args(t core.Turn) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"}
	if t.ResumeToken != "" {
		args = append(args, "--resume", t.ResumeToken)
	}
	if p.cfg.PermissionMode != "" {
		args = append(args, "--permission-mode", p.cfg.PermissionMode)
	}
	if p.cfg.Model != "" {
		args = append(args, "--model", p.cfg.Model)
	}
	args = append(args, p.cfg.Args...)
	return append(args, "--", t.Prompt)
}

// Run runs one turn of Claude Code.
func (p *Plugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	proc, err := cliproc.Start(ctx, cliproc.Spec{Bin: p.cfg.Bin, Args: p.Args(t), Dir: t.Workdir, Env: p.cfg.Env})
	if errors.Is(err, cliproc.ErrNotFound) {
		return core.TurnResult{}, cliproc.NotFound("Claude Code", p.cfg.Bin, "@anthropic-ai/claude-code", "CLAUDE_BIN")
	}
	if err != nil {
		return core.TurnResult{}, fmt.Errorf("start claude: %w", err)
	}
	parser := NewParser(emit)
	readErr := ReadStream(proc.Stdout, parser, emit)
	res, waitErr := proc.Wait()
	out := core.TurnResult{ResumeToken: parser.SessionID()}
	if r := parser.Result(); r != nil {
		out = *r
		if out.ResumeToken == "" {
			out.ResumeToken = parser.SessionID()
		}
	}
	end := cliproc.Ending{CLI: "Claude Code", Result: res, WaitErr: waitErr, ReadErr: readErr,
		Finished: parser.Result() != nil, Failed: out.IsError}
	return out, end.Err(ctx)
}

// ReadStream feeds every line of r to parser. A line over the size limit
// is reported as an error block and skipped.
func ReadStream(r io.Reader, parser *Parser, emit func(core.Event)) error {
	lr := cliproc.NewLineReader(r, cliproc.MaxLine)
	for {
		b, err := lr.Next()
		switch {
		case err == nil:
			parser.Line(b)
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, cliproc.ErrLineTooLong):
			emit(core.ErrorEvent("Claude Code printed an oversized line, skipped (" + err.Error() + ")"))
		default:
			return err
		}
	}
}

// CheckResumeID accepts Claude Code's session ids, which are UUIDs.
func (p *Plugin) CheckResumeID(id string) error {
	return cliproc.CheckUUID(id, "Claude Code session id")
}

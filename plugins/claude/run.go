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
	// Environ is the environment the CLI starts from; nil means the
	// bot's own (see cliproc.Spec).
	Environ []string
	// Env is added to Environ (tests point it at a fake model server).
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
// so that a message starting with a dash is never read as a flag. A turn
// that may ask speaks the control protocol instead: the message goes on
// stdin, and permission requests come to the bot.
func (p *Plugin) Args(t core.Turn) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"}
	if t.Ask {
		args = append(args, "--input-format", "stream-json", "--permission-prompt-tool", "stdio")
	}
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
	if t.Ask {
		return args
	}
	return append(args, "--", t.Prompt)
}

// Run runs one turn of Claude Code. A turn that may ask (t.Ask) speaks
// the control protocol: permission requests become questions, and
// cancelling the turn interrupts it through the protocol, so that the
// partial turn stays in the session; the CLI is killed only if it has not
// ended cliproc.InterruptGrace later.
func (p *Plugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	procCtx, kill := ctx, context.CancelFunc(func() {})
	if t.Ask {
		procCtx, kill = context.WithCancel(context.WithoutCancel(ctx))
		defer kill()
	}
	proc, err := cliproc.Start(procCtx, cliproc.Spec{Bin: p.cfg.Bin, Args: p.Args(t), Dir: t.Workdir, Environ: p.cfg.Environ,
		Env: p.cfg.Env, Stdin: t.Ask})
	if errors.Is(err, cliproc.ErrNotFound) {
		return core.TurnResult{}, cliproc.NotFound("Claude Code", p.cfg.Bin, "@anthropic-ai/claude-code", "CLAUDE_BIN")
	}
	if err != nil {
		return core.TurnResult{}, fmt.Errorf("start claude: %w", err)
	}
	parser := NewParser(emit)
	if t.Ask {
		stop := p.converse(ctx, t, proc, parser, emit, kill)
		defer stop()
	}
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

// converse sends the turn's message on proc's stdin, routes permission
// requests to the chat, and interrupts the turn when ctx ends, calling
// kill if the CLI cannot be told or has not ended cliproc.InterruptGrace
// later.
// The returned function stops watching ctx.
func (p *Plugin) converse(ctx context.Context, t core.Turn, proc *cliproc.Process, parser *Parser, emit func(core.Event), kill func()) (stop func()) {
	in := &stdin{JSONLines: cliproc.NewJSONLines(proc.Stdin)}
	if err := in.Send(userMessage(t.Prompt)); err != nil {
		p.logger.Warn("send the message", "err", err)
	}
	parser.OnResult = in.Close
	parser.OnPermission = func(req PermissionRequest) {
		emit(core.Event{Kind: core.EventQuestion, Question: question(req, func(a core.Answer) {
			if err := in.answer(req, a); err != nil {
				p.logger.Warn("answer a permission request", "tool", req.Tool, "err", err)
			}
		})})
	}
	return cliproc.InterruptOn(ctx, func() error {
		parser.Interrupt()
		return in.interrupt()
	}, kill, cliproc.InterruptGrace)
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

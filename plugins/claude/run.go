package claude

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"

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

// Modes are Claude Code's permission modes (--permission-mode).
func (p *Plugin) Modes() []core.Mode {
	return []core.Mode{
		{Name: "plan", Help: "reads and plans, changes nothing until the plan is approved"},
		{Name: "acceptEdits", Help: "edits files without asking; asks before other tools"},
		{Name: "dontAsk", Help: "runs only the tools allowed beforehand, denies the rest"},
		{Name: "bypassPermissions", Help: "runs every tool without asking", Bypass: true},
	}
}

// Args returns the CLI's arguments for a turn. The prompt comes after "--"
// so that a message starting with a dash is never read as a flag. A turn
// that may ask speaks the control protocol instead: the message goes on
// stdin, and permission requests come to the bot. So does a turn with
// images, which only a stream-json message carries.
func (p *Plugin) Args(t core.Turn) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages"}
	if streamsInput(t) {
		args = append(args, "--input-format", "stream-json")
	}
	if t.Ask {
		args = append(args, "--permission-prompt-tool", "stdio")
	}
	if t.ResumeToken != "" {
		args = append(args, "--resume", t.ResumeToken)
	}
	if mode := cmp.Or(t.Mode, p.cfg.PermissionMode); mode != "" {
		args = append(args, "--permission-mode", mode)
	}
	if model := cmp.Or(t.Model, p.cfg.Model); model != "" {
		args = append(args, "--model", model)
	}
	if t.MaxCostUSD > 0 {
		// The CLI counts its own cost and stops the turn there.
		args = append(args, "--max-budget-usd", strconv.FormatFloat(t.MaxCostUSD, 'f', -1, 64))
	}
	args = append(args, p.cfg.Args...)
	if streamsInput(t) {
		return args
	}
	return append(args, "--", t.Prompt)
}

// streamsInput says whether t's message goes on stdin as stream-json.
func streamsInput(t core.Turn) bool { return t.Ask || len(t.Images) > 0 }

// Run runs one turn of Claude Code. A turn that may ask (t.Ask) speaks
// the control protocol: permission requests become questions, and
// cancelling the turn interrupts it through the protocol, so that the
// partial turn stays in the session; the CLI is killed only if it has not
// ended cliproc.InterruptGrace later.
func (p *Plugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	if streamsInput(t) {
		c, err := p.start(context.WithoutCancel(ctx), t)
		if err != nil {
			return core.TurnResult{}, err
		}
		return c.Run(ctx, t, emit)
	}
	proc, err := cliproc.Start(ctx, cliproc.Spec{Bin: p.cfg.Bin, Args: p.Args(t), Dir: t.Workdir, Environ: p.cfg.Environ, Env: p.cfg.Env})
	if err != nil {
		return core.TurnResult{}, p.startError(err)
	}
	parser := NewParser(emit)
	parser.Workdir = t.Workdir
	return finish(ctx, proc, parser, emit)
}

func (p *Plugin) startError(err error) error {
	if errors.Is(err, cliproc.ErrNotFound) {
		return cliproc.NotFound("Claude Code", p.cfg.Bin, "@anthropic-ai/claude-code", "CLAUDE_BIN")
	}
	return fmt.Errorf("start claude: %w", err)
}

// finish reads the turn's stream to its end and waits for the CLI.
func finish(ctx context.Context, proc *cliproc.Process, parser *Parser, emit func(core.Event)) (core.TurnResult, error) {
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

// conversing is a Claude Code process speaking the control protocol,
// started and waiting for its turn's message: a turn's own, or a warm
// one started before the message existed (core.Warmer).
type conversing struct {
	p       *Plugin
	t       core.Turn
	proc    *cliproc.Process
	in      *stdin
	kill    context.CancelFunc
	session sessionStamp
	once    sync.Once
}

// start starts the CLI for t without its message. life bounds the
// process: cancelling it kills the CLI.
func (p *Plugin) start(life context.Context, t core.Turn) (*conversing, error) {
	procCtx, kill := context.WithCancel(life)
	proc, err := cliproc.Start(procCtx, cliproc.Spec{Bin: p.cfg.Bin, Args: p.Args(t), Dir: t.Workdir, Environ: p.cfg.Environ,
		Env: p.cfg.Env, Stdin: true})
	if err != nil {
		kill()
		return nil, p.startError(err)
	}
	return &conversing{p: p, t: t, proc: proc, in: &stdin{JSONLines: cliproc.NewJSONLines(proc.Stdin)}, kill: kill,
		session: p.stampSession(t)}, nil
}

// Run hands the message to the waiting CLI and runs the turn: permission
// requests go to the chat, and cancelling ctx interrupts the turn.
func (c *conversing) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	defer c.kill()
	parser := NewParser(emit)
	parser.Workdir = c.t.Workdir
	parser.OnResult = c.in.Close
	parser.OnPermission = func(req PermissionRequest) {
		emit(core.Event{Kind: core.EventQuestion, Question: question(req, func(a core.Answer) {
			if err := c.in.answer(req, a); err != nil {
				c.p.logger.Warn("answer a permission request", "tool", req.Tool, "err", err)
			}
		})})
	}
	if err := c.in.Send(userMessage(t)); err != nil {
		c.p.logger.Warn("send the message", "err", err)
	}
	stop := cliproc.InterruptOn(ctx, func() error {
		parser.Interrupt()
		return c.in.interrupt()
	}, c.kill, cliproc.InterruptGrace)
	defer stop()
	return finish(ctx, c.proc, parser, emit)
}

// Fresh reports whether the session the CLI loaded is still as it was:
// resumed meanwhile elsewhere (a terminal, another conversation), the
// waiting CLI would answer from stale history.
func (c *conversing) Fresh() bool { return c.p.stampSession(c.t) == c.session }

// Close stops an unused CLI and waits until it is gone.
func (c *conversing) Close() {
	c.once.Do(func() {
		c.kill()
		io.Copy(io.Discard, c.proc.Stdout)
		c.proc.Wait()
	})
}

// Warm starts the CLI of t's conversation's next turn, waiting for its
// message (core.Warmer): Claude Code starting up is most of a short
// turn. Only a turn that speaks the control protocol can wait.
func (p *Plugin) Warm(life context.Context, t core.Turn) (core.WarmTurn, error) {
	if !t.Ask {
		return nil, core.ErrNoWarm
	}
	return p.start(life, t)
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
	if t.ResumeToken == "" {
		return sessionStamp{}
	}
	dirs, err := p.projectDirs(t.Workdir)
	if err != nil {
		return sessionStamp{}
	}
	for _, dir := range dirs {
		f, err := os.Open(filepath.Join(dir, t.ResumeToken+".jsonl"))
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

// ReadStream feeds every line of r to parser. A line over the size limit
// is reported as an error block and skipped.
func ReadStream(r io.Reader, parser *Parser, emit func(core.Event)) error {
	return cliproc.EachLine(r, "Claude Code", parser.Line, func(msg string) { emit(core.ErrorEvent(msg)) })
}

// CheckResumeID accepts Claude Code's session ids, which are UUIDs.
func (p *Plugin) CheckResumeID(id string) error {
	return cliproc.CheckUUID(id, "Claude Code session id")
}

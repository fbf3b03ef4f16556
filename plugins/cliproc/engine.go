package cliproc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// CLI is a coding CLI as the turn engine runs it: how to start it and how
// to name it to the user. A plugin fills one in New; the engine spawns
// the CLI, reads its output through the plugin's Protocol, waits for it
// and says how the turn ended, so that a plugin holds only its CLI's
// arguments, protocol mapping and history. A CLI is safe for concurrent
// use once built.
type CLI struct {
	// Name is the display name, e.g. "Claude Code".
	Name string
	Bin  string
	// Install says how to get the CLI or point the bot at it, for the
	// error when Bin is not found (Settings.Base writes a built-in
	// plugin's).
	Install string
	// Environ and Env are as in Spec: the environment the CLI starts
	// from (nil: the bot's own) and what is added to it.
	Environ []string
	Env     []string
	// Grace is Spec.Grace; PTY, when set, runs every turn in a
	// pseudo-terminal of that size (Spec.PTY).
	Grace time.Duration
	PTY   *TermSize
	// ExitGrace is how long a CLI that speaks a protocol has to exit once
	// its protocol has ended the turn (Link.Done) before it is stopped;
	// zero means DefaultExitGrace.
	ExitGrace time.Duration
	// Sandbox, when on, is the wall the CLI runs behind (Spec.Sandbox),
	// and State the CLI's own state, which it shows the CLI: each plugin
	// lists only what is its own.
	Sandbox *Sandbox
	State   StateFunc
	// Clean, when set, removes noise from stderr before it is shown.
	Clean func(string) string
	// ToolTokenFromEnv: the CLI reads the turn's token of the bot's MCP
	// server from ToolTokenEnv. Another is told it otherwise (ACP's
	// session/new) or not at all, and its environment, which every
	// command its agent runs inherits, goes without it.
	ToolTokenFromEnv bool
	// Logger gets the stderr of turns that went well, at debug level:
	// warnings a turn survives are for the operator, not the chat. Nil
	// discards.
	Logger *slog.Logger
}

// Protocol is what a plugin knows of its CLI for one turn: it reads each
// line the CLI writes (a stream of events, or the messages of a protocol
// it speaks on stdin through its Link) and emits events through its Link.
// The engine calls Line from one goroutine, then Outcome once the output
// has ended.
type Protocol interface {
	Line(b []byte)
	// Outcome says how the turn went once the CLI has exited. It may emit
	// what the protocol held back.
	Outcome() Outcome
}

// Interrupter is a Protocol that can stop a running turn through the
// CLI's own protocol, after which the CLI ends the turn and keeps it in
// its session. Without one, cancelling a turn kills the CLI.
type Interrupter interface {
	Interrupt() error
}

// Freshener is a Protocol that can tell whether what its CLI loaded at
// start (its session) is still current; see core.WarmTurn.
type Freshener interface {
	Fresh() bool
}

// Unchanged returns a function that reports whether stamp returns what it
// returns now: a Freshener's test that what its CLI loaded at start (a
// session's files, stamped) has not changed since.
func Unchanged[T comparable](stamp func() T) func() bool {
	was := stamp()
	return func() bool { return stamp() == was }
}

// Reader is a Protocol that reads its CLI's output itself rather than
// line by line (a terminal's screen). input is the terminal's input side
// (Process.Input), nil when there is none. It returns the read error.
type Reader interface {
	Read(stdout io.Reader, input io.Writer) error
}

// Outcome is how a turn went, as the CLI's output told.
type Outcome struct {
	// Result is the turn's result; nil when the output ended without one.
	Result *core.TurnResult
	// SessionID is the session id the output reported, the session id
	// when Result has none.
	SessionID string
	// Failed is set when the output reported a failure, already shown.
	Failed bool
}

// Run runs one turn of the CLI with args, its output read by the protocol
// that newProtocol makes, and returns when the CLI has exited. Cancelling
// ctx kills the CLI and everything it started. The error is nil for a turn
// that went well or whose failure the output showed; see ending.Err.
func (c *CLI) Run(ctx context.Context, t core.Turn, args []string, newProtocol func(*Link) Protocol, emit func(core.Event)) (core.TurnResult, error) {
	proc, err := c.start(ctx, t, args, false)
	if err != nil {
		return core.TurnResult{}, err
	}
	link := newLink(nil, c.logger())
	link.emitFn = emit
	proto := newProtocol(link)
	readErr := c.read(proc, proto, link)
	return c.finish(ctx, t, proc, readErr, proto, false)
}

// ToolTokenEnv is the environment variable that holds the turn's bearer
// token of the bot's MCP server (core.ToolAccess) for a CLI that reads it
// from there: an argument would show it to every user of the machine
// (/proc/<pid>/cmdline), the environment only to the bot's.
const ToolTokenEnv = "JAKEBOT_TOOLS_TOKEN"

// start starts the CLI for t in its workdir; stdin gives it a pipe for a
// protocol.
func (c *CLI) start(ctx context.Context, t core.Turn, args []string, stdin bool) (*Process, error) {
	env := c.Env
	if t.Tools != nil && c.ToolTokenFromEnv {
		env = append(slices.Clip(env), ToolTokenEnv+"="+t.Tools.Token)
	}
	proc, err := Start(ctx, Spec{Bin: c.Bin, Args: args, Dir: t.Workdir, Environ: c.Environ, Env: env, Grace: c.Grace,
		Stdin: stdin, PTY: c.PTY, Sandbox: c.Sandbox, State: c.State})
	if errors.Is(err, ErrNotFound) {
		return nil, core.Errorf("%s CLI not found (%s). %s", c.Name, c.Bin, c.Install)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", c.Name, err)
	}
	if t.Tools != nil && t.Tools.Spawned != nil {
		t.Tools.Spawned(proc.Pid())
	}
	return proc, nil
}

// read feeds the CLI's whole output to the protocol.
func (c *CLI) read(proc *Process, proto Protocol, link *Link) error {
	return readOutput(proc.Stdout, proc.Input, c.Name, proto, link)
}

func readOutput(r io.Reader, input io.Writer, name string, proto Protocol, link *Link) error {
	if rd, ok := proto.(Reader); ok {
		return rd.Read(r, input)
	}
	return eachLine(r, name, proto.Line, func(msg string) { link.Emit(core.ErrorEvent(msg)) })
}

// finish waits for the CLI and says how the turn ended: its result, with
// the session id the output gave, else the turn's own, and the error
// for a turn that did not end well. The protocol's Outcome is asked once
// the CLI is gone, so that what it wrote elsewhere is complete.
// stopped says the bot stopped a CLI that lingered after its turn's end:
// its exit by a signal is then no failure of the turn.
func (c *CLI) finish(ctx context.Context, t core.Turn, proc *Process, readErr error, proto Protocol, stopped bool) (core.TurnResult, error) {
	res, waitErr := proc.Wait()
	o := proto.Outcome()
	var out core.TurnResult
	if o.Result != nil {
		out = *o.Result
	}
	// A resumed turn that failed before its first event keeps the
	// session it was resuming.
	out.SessionID = cmp.Or(out.SessionID, o.SessionID, t.SessionID)
	end := ending{CLI: c.Name, Result: res, WaitErr: waitErr, ReadErr: readErr,
		Finished: o.Result != nil, Failed: o.Failed || out.IsError, Stopped: stopped, Clean: c.Clean}
	if tail := end.Stderr(5); tail != "" {
		c.logger().Debug("CLI stderr", "cli", c.Name, "exit_code", res.ExitCode, "tail", tail)
	}
	return out, end.Err(ctx)
}

func (c *CLI) logger() *slog.Logger {
	return core.OrDiscard(c.Logger)
}

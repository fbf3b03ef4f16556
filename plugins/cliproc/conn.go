package cliproc

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// Link is what a Protocol has of its turn: where its events go, and, for a
// CLI that speaks a protocol on its stdin, the way to write to it. It is
// safe for concurrent use: answers come from the chat and interrupts from
// /stop while the engine reads.
type Link struct {
	out    *jsonLines // nil for a CLI that reads no input
	logger *slog.Logger

	mu sync.Mutex
	// emitFn is where events go once the turn runs; until then they wait
	// in early (a warm CLI emits its session before its message exists).
	emitFn func(core.Event)
	early  []core.Event
	// msg is the turn's message once it runs, and ready what the
	// protocol does with it once the CLI can take it; sent is set when
	// it has.
	msg   *core.Turn
	ready func(core.Turn)
	sent  bool
	// readied is closed by the first Ready: the CLI can take the message.
	readied chan struct{}

	// ended is closed by Done: the protocol has ended the turn.
	ended     chan struct{}
	endedOnce sync.Once
}

func newLink(out *jsonLines, logger *slog.Logger) *Link {
	return &Link{out: out, logger: logger, ended: make(chan struct{}), readied: make(chan struct{})}
}

// errNoInput is Link.Send's error for a CLI that reads no input.
var errNoInput = errors.New("this CLI reads no input")

// Emit passes ev on to the turn, or keeps it, in order, until the turn runs.
func (l *Link) Emit(ev core.Event) {
	l.mu.Lock()
	fn := l.emitFn
	if fn == nil {
		l.early = append(l.early, ev)
	}
	l.mu.Unlock()
	if fn != nil {
		fn(ev)
	}
}

// Send writes v to the CLI as one JSON line; see jsonLines.Send.
func (l *Link) Send(v any) error {
	if l.out == nil {
		return errNoInput
	}
	return l.out.Send(v)
}

// Done closes the CLI's input: the turn is over and the CLI exits.
func (l *Link) Done() {
	if l.out != nil {
		l.out.Close()
	}
	l.endedOnce.Do(func() { close(l.ended) })
}

// Ready says the CLI can take the turn's message: send is called with it
// once, at once when the turn runs already, else when it does (a warm CLI
// waits for its message). Only the first call counts.
func (l *Link) Ready(send func(core.Turn)) {
	l.mu.Lock()
	if l.ready != nil || l.sent {
		l.mu.Unlock()
		return
	}
	l.ready = send
	close(l.readied)
	l.mu.Unlock()
	l.hand()
}

// Logger is where a protocol logs what goes wrong talking to its CLI.
func (l *Link) Logger() *slog.Logger { return l.logger }

// begin makes emit where the turn's events go, the early ones first, and
// hands over the message.
func (l *Link) begin(t core.Turn, emit func(core.Event)) {
	for {
		l.mu.Lock()
		early := l.early
		l.early = nil
		if len(early) == 0 {
			// Events emitted while the early ones were delivered waited
			// behind them; now they go straight on.
			l.emitFn = emit
			l.msg = &t
			l.mu.Unlock()
			break
		}
		l.mu.Unlock()
		for _, ev := range early {
			emit(ev)
		}
	}
	l.hand()
}

// hand calls the protocol's send with the message once both exist.
func (l *Link) hand() {
	l.mu.Lock()
	if l.msg == nil || l.ready == nil || l.sent {
		l.mu.Unlock()
		return
	}
	l.sent = true
	send, t := l.ready, *l.msg
	l.mu.Unlock()
	send(t)
}

// Conn is a CLI started for one turn that speaks a protocol on its stdin,
// waiting for the turn's message: a turn's own, or one started before the
// message existed (a warm turn, core.WarmTurn). Its output is read from
// the start, so the protocol's handshake runs while it waits.
type Conn struct {
	cli   *CLI
	t     core.Turn
	proc  *Process
	kill  context.CancelFunc
	link  *Link
	proto Protocol

	read     chan error
	readOnce sync.Once
	readErr  error
}

var _ core.WarmTurn = (*Conn)(nil)

// Open starts the CLI for t with args, speaking the protocol newProtocol
// makes (which may write its opening to the CLI at once), and returns it
// waiting for the turn's message. Cancelling life kills the CLI.
func (c *CLI) Open(life context.Context, t core.Turn, args []string, newProtocol func(*Link) Protocol) (*Conn, error) {
	procCtx, kill := context.WithCancel(life)
	proc, err := c.start(procCtx, t, args, true)
	if err != nil {
		kill()
		return nil, err
	}
	link := newLink(newJSONLines(proc.Stdin), c.logger())
	conn := &Conn{cli: c, t: t, proc: proc, kill: kill, link: link, read: make(chan error, 1)}
	conn.proto = newProtocol(link)
	go func() { conn.read <- c.read(proc, conn.proto, link) }()
	return conn, nil
}

// Ready is closed once the protocol has said the CLI can take the turn's
// message (Link.Ready): its handshake is done, so a warm CLI whose Ready
// is closed has started and waits for nothing but the message.
func (c *Conn) Ready() <-chan struct{} { return c.link.readied }

// Converse runs one turn of a CLI that speaks a protocol: Open, then Run.
// Cancelling ctx interrupts the turn through the protocol, when it can,
// rather than killing the CLI.
func (c *CLI) Converse(ctx context.Context, t core.Turn, args []string, newProtocol func(*Link) Protocol, emit func(core.Event)) (core.TurnResult, error) {
	conn, err := c.Open(context.WithoutCancel(ctx), t, args, newProtocol)
	if err != nil {
		return core.TurnResult{}, err
	}
	return conn.Run(ctx, t, emit)
}

// Run hands t's message (its prompt and images) to the waiting CLI and
// runs the turn, as CLI.Run does. Cancelling ctx interrupts the turn
// through the protocol (an Interrupter), killing the CLI only if that
// fails or it has not ended InterruptGrace later; a protocol that cannot
// interrupt is killed at once.
//
// A CLI started for a turn that may write refuses a read-only one
// (core.Turn.ReadOnly), whose means it was not started with, and stops.
func (c *Conn) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	defer c.kill()
	if t.ReadOnly && !c.t.ReadOnly {
		c.Close()
		return core.TurnResult{}, ErrNotReadOnly
	}
	c.link.begin(t, emit)
	var stop func()
	if in, ok := c.proto.(Interrupter); ok {
		stop = interruptOn(ctx, in.Interrupt, c.kill, InterruptGrace)
	} else {
		after := context.AfterFunc(ctx, c.kill)
		stop = func() { after() }
	}
	lingering := c.stopLingering()
	readErr := c.waitRead()
	stop()
	return c.cli.finish(ctx, c.t, c.proc, readErr, c.proto, lingering())
}

// ErrNotReadOnly is Conn.Run's error for a read-only turn given to a CLI
// started for a turn that may write.
var ErrNotReadOnly = errors.New("a CLI started for a turn that may write cannot run a read-only one")

// DefaultExitGrace is CLI.ExitGrace when unset: ample for a CLI to save
// its session and exit, short beside a turn that would otherwise never end.
const DefaultExitGrace = 30 * time.Second

// stopLingering stops the CLI if it has not exited ExitGrace after its
// protocol ended the turn: a CLI that stays on (one holding a connection
// of its own open) must not hold the turn, its reply and its slot until
// /stop or TURN_TIMEOUT. The returned func ends the watch once the CLI's
// output has ended and reports whether the CLI was stopped.
func (c *Conn) stopLingering() (stopped func() bool) {
	quit, done := make(chan struct{}), make(chan bool, 1)
	grace := cmp.Or(c.cli.ExitGrace, DefaultExitGrace)
	go func() {
		select {
		case <-c.link.ended:
		case <-quit:
			done <- false
			return
		}
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-timer.C:
			c.cli.logger().Warn("the CLI did not exit after its turn ended; stopping it", "cli", c.cli.Name, "pid", c.proc.Pid(), "grace", grace)
			c.kill()
			done <- true
		case <-c.proc.exited:
			done <- false
		case <-quit:
			done <- false
		}
	}()
	return func() bool {
		close(quit)
		return <-done
	}
}

// Fresh reports whether what the CLI loaded at start is still current,
// as its protocol tells (a Freshener); one that cannot tell is.
func (c *Conn) Fresh() bool {
	if f, ok := c.proto.(Freshener); ok {
		return f.Fresh()
	}
	return true
}

// PID is the CLI's process id: the warm CLIs' memory is their process
// trees' (TreeRSS).
func (c *Conn) PID() int { return c.proc.Pid() }

// Close stops the CLI and waits until it is gone. It is for a CLI that
// was never run; after Run it only makes sure the CLI is killed.
func (c *Conn) Close() {
	c.kill()
	c.waitRead()
	c.proc.Wait()
}

// waitRead waits until the CLI's output has been read to its end.
func (c *Conn) waitRead() error {
	c.readOnce.Do(func() { c.readErr = <-c.read })
	return c.readErr
}

// Replay feeds a recorded session (what a CLI wrote) through a turn's
// protocol as a run does, its input going nowhere and nobody answering
// its questions: for jakebot replay and golden tests. The result is nil
// when the session carried none; its session id is the session's id.
func Replay(r io.Reader, name string, newProtocol func(*Link) Protocol, emit func(core.Event)) (*core.TurnResult, error) {
	link := newLink(newJSONLines(discard{}), slog.New(slog.DiscardHandler))
	link.emitFn, link.msg = emit, &core.Turn{}
	proto := newProtocol(link)
	err := readOutput(r, nil, name, proto, link)
	o := proto.Outcome()
	if o.Result != nil {
		o.Result.SessionID = cmp.Or(o.Result.SessionID, o.SessionID)
	}
	return o.Result, err
}

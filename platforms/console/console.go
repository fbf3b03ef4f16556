// Package console is the local platform: lines read from an input are one
// user's messages and replies are written to an output. On a terminal,
// replies are redrawn in place as they stream; on a pipe each line waits
// until the one before it is done and each reply is written once, final,
// so that the bot can be scripted:
//
//	printf '/claude start .\nhello\n' | jakebot
package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
)

// Name is the platform's name in conversation keys.
const Name = "console"

// User is the console's one user id; the bot allows it, since whoever
// types here already has a shell on the host.
const User = "local"

// Console is the console platform. It is safe for concurrent use.
type Console struct {
	format // tty: out is a terminal
	in     io.Reader
	out    io.Writer
	typed  bool

	mu     sync.Mutex
	nextID int
	// last is the message shown last on a terminal and how many lines it
	// took, so that an edit of it can redraw in place.
	lastID    string
	lastLines int
}

var _ core.Platform = (*Console)(nil)

// Options say where the console reads and writes; each zero value is a
// working default.
type Options struct {
	// In is what is typed or scripted; nil reads nothing.
	In io.Reader
	// Out is where replies go; nil discards them.
	Out io.Writer
	// TTY says Out is a terminal that understands cursor movement.
	TTY bool
	// Typed says a person types the input: each line then goes to the
	// router at once, so that /stop reaches a running turn; otherwise the
	// input is a script, and each line waits until the one before it is
	// done.
	Typed bool
}

// New returns a console.
func New(opts Options) *Console {
	in, out := opts.In, opts.Out
	if in == nil {
		in = strings.NewReader("")
	}
	if out == nil {
		out = io.Discard
	}
	return &Console{format: format{tty: opts.TTY}, in: in, out: out, typed: opts.Typed}
}

func (c *Console) Name() string { return Name }

// Run passes each input line to h until the input ends or ctx is done.
func (c *Console) Run(ctx context.Context, h core.Handler) error {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(c.in)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			n++
			m := core.Message{
				Key:      core.ConversationKey{Platform: Name, User: User, Channel: "terminal"},
				ID:       strconv.Itoa(n),
				UserName: User,
				Text:     line,
			}
			if c.typed {
				// A person may type /stop while a turn streams.
				h(ctx, m)
				continue
			}
			// A script: each line runs once the one before it is done,
			// so a listing after a turn sees that turn.
			done := make(chan struct{})
			m.Done = func() { close(done) }
			h(ctx, m)
			select {
			case <-done:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// format is how the console writes: on a terminal (tty) or on a pipe.
type format struct{ tty bool }

// NewFormat returns the console's format on a terminal or on a pipe.
func NewFormat(tty bool) core.Format { return format{tty: tty} }

// Limits: a terminal is redrawn at most every 100 ms; a pipe gets each
// reply once, final.
func (f format) Limits() core.Limits {
	if f.tty {
		return core.Limits{EditInterval: 100 * time.Millisecond}
	}
	return core.Limits{FinalOnly: true}
}

// Render renders blocks in one page (a terminal has no length limit),
// styled on a terminal and plain markdown on a pipe; model text is
// stripped of control characters either way.
func (f format) Render(blocks []core.ResponseBlock) []string {
	return []string{formatter.Terminal(blocks, f.tty)}
}

func (c *Console) Send(ctx context.Context, to core.Target, text string) (core.MessageRef, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	if err := c.print(text); err != nil {
		return core.MessageRef{}, err
	}
	c.lastID = id
	return core.MessageRef{Target: to, ID: id}, nil
}

// Edit redraws the message when it is the last thing on the terminal, and
// prints it again otherwise.
func (c *Console) Edit(ctx context.Context, ref core.MessageRef, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tty && ref.ID == c.lastID && c.lastLines > 0 {
		// Up to the message's first line, then clear to the end of screen.
		fmt.Fprintf(c.out, "\x1b[%dF\x1b[J", c.lastLines)
	}
	c.lastID = ref.ID
	return c.print(text)
}

func (c *Console) print(text string) error {
	text = strings.TrimRight(text, "\n") + "\n"
	c.lastLines = strings.Count(text, "\n")
	if !c.tty {
		// Nothing styles a pipe's text, so anything that bypassed Render
		// is stripped here too.
		text = formatter.StripControl(text) + "\n"
	}
	_, err := io.WriteString(c.out, text)
	return err
}

package configured

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Plugin runs one configured CLI. It is safe for concurrent use.
type Plugin struct {
	spec   Spec
	cli    *cliproc.CLI
	logger *slog.Logger
	acp    acpState
}

var (
	_ core.Plugin           = (*Plugin)(nil)
	_ core.SessionIDChecker = (*Plugin)(nil)
	_ core.SessionKeeper    = (*Plugin)(nil)
)

// New returns the plugin for spec. A nil logger discards.
func New(spec Spec, logger *slog.Logger) *Plugin {
	logger = core.OrDiscard(logger)
	if spec.Name == "" {
		spec.Name = spec.ID
	}
	if spec.Mode == ModePTY {
		if spec.Term.Cols == 0 || spec.Term.Rows == 0 {
			spec.Term = cliproc.TermSize{Cols: DefaultCols, Rows: DefaultRows}
		}
		if spec.Settle <= 0 {
			spec.Settle = DefaultSettle
		}
	}
	cli := &cliproc.CLI{Name: spec.Name, Bin: spec.Bin, Environ: spec.Environ, Env: spec.Env, Grace: spec.Grace, Logger: logger,
		Install: fmt.Sprintf("Install it, or fix its bin in the plugins file (%s)", spec.Source),
		Sandbox: spec.Sandbox, State: statePaths(spec.State)}
	if spec.Mode == ModePTY {
		cli.PTY = &spec.Term
	}
	return &Plugin{spec: spec, cli: cli, logger: logger}
}

// Plugins returns a plugin for each spec.
func Plugins(specs []Spec, logger *slog.Logger) []core.Plugin {
	var out []core.Plugin
	for _, s := range specs {
		l := logger
		if l != nil {
			l = l.With("plugin", s.ID)
		}
		out = append(out, New(s, l))
	}
	return out
}

func (p *Plugin) ID() string   { return p.spec.ID }
func (p *Plugin) Name() string { return p.spec.Name }

// Spec returns the plugin's description.
func (p *Plugin) Spec() Spec { return p.spec }

// KeepsSessions reports whether turns resume the CLI's session.
func (p *Plugin) KeepsSessions() bool { return p.spec.KeepsSessions() }

// Conversations returns none but an ACP agent's own list (session/list):
// a configured CLI's history is its own.
func (p *Plugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	if p.spec.Mode == ModeACP {
		return p.acpConversations(ctx, workdir)
	}
	return nil, nil
}

// CheckSessionID accepts an id that can safely become an argument, for a
// CLI whose sessions can be resumed.
func (p *Plugin) CheckSessionID(id string) error {
	if !p.KeepsSessions() {
		return core.Errorf("%s cannot resume a session: each turn starts fresh", p.spec.Name)
	}
	if !tokenRE.MatchString(id) {
		return core.Errorf("%q is not a session id %s could use (letters, digits and ._:+=@- only)", id, p.spec.Name)
	}
	return nil
}

// Run runs one turn of the CLI; a read-only one (core.Turn.ReadOnly) only
// where the agent has a read-only mode, else it returns core.ErrNoReadOnly.
func (p *Plugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	if _, ok := p.readOnlyMode(); t.ReadOnly && !ok {
		return core.TurnResult{}, core.ErrNoReadOnly
	}
	if p.spec.Mode == ModeACP {
		return p.cli.Converse(ctx, t, p.spec.Argv(t), p.protocol(t), emit)
	}
	if !p.KeepsSessions() {
		t.SessionID = ""
	}
	return p.cli.Run(ctx, t, p.spec.Argv(t), func(link *cliproc.Link) cliproc.Protocol { return p.reader(link, true) }, emit)
}

// ReadStream turns a CLI's recorded output into events exactly as Run
// does while the CLI runs, but with no process: for jakebot replay. A
// terminal's screen is shown once, at the end.
func (p *Plugin) ReadStream(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	return cliproc.Replay(r, p.spec.Name, func(link *cliproc.Link) cliproc.Protocol { return p.reader(link, false) }, emit)
}

// reader reads one turn's output as the plugin's mode says; live, a
// terminal's screen is shown as it settles, not only at the end.
func (p *Plugin) reader(link *cliproc.Link, live bool) cliproc.Protocol {
	o := output{p: p, emit: link.Emit}
	switch p.spec.Mode {
	case ModeACP:
		return p.replayProtocol(link)
	case ModeJSONL:
		o.j = &jsonlReader{m: p.spec.JSONL, emit: link.Emit}
	case ModePTY:
		return &screenOutput{output: o, live: live}
	}
	return &o
}

// output is a turn's output read line by line: JSON lines mapped by the
// plugin's jsonl fields, or plain lines of text.
type output struct {
	p    *Plugin
	emit func(core.Event)
	j    *jsonlReader
	// session is the session id found; errors counts the error blocks
	// emitted.
	session string
	errors  int
	all     strings.Builder // the output so far, for a code block
}

func (o *output) Line(b []byte) {
	if o.j != nil {
		o.j.line(b)
		return
	}
	line := string(b)
	o.findSession(line)
	if o.p.spec.Code {
		o.all.WriteString(line + "\n")
		o.emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockCode, ID: "output", Text: o.all.String()}))
		return
	}
	o.emit(core.TextEvent(line + "\n"))
}

// Outcome says how the turn went: a configured CLI's output has no
// result line, so it ends as its exit status says, failed when an error
// block was shown.
func (o *output) Outcome() cliproc.Outcome {
	if j := o.j; j != nil {
		o.session, o.errors = j.session, j.errors
		if j.garbage > 0 {
			o.p.logger.Debug("lines that were not JSON objects", "count", j.garbage)
		}
	}
	return cliproc.Outcome{Result: &core.TurnResult{SessionID: o.session, IsError: o.errors > 0}}
}

// findSession takes the session id from text by the resume pattern; the
// last match wins.
func (o *output) findSession(text string) {
	if o.p.spec.Resume == nil {
		return
	}
	ms := o.p.spec.Resume.FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return
	}
	id := ms[len(ms)-1][1]
	if id == o.session {
		return
	}
	if !tokenRE.MatchString(id) {
		o.p.logger.Warn("session id found by the resume pattern cannot be an argument; ignored", "id", id)
		return
	}
	o.session = id
	o.emit(core.Event{Kind: core.EventSession, SessionID: id})
}

// screenOutput is a pseudo-terminal's output, read as a screen: live, on
// every tick the settled text, when it changed, replaces the reply's
// terminal block; at the end the whole screen does.
type screenOutput struct {
	output
	live bool
}

func (s *screenOutput) Read(r io.Reader, answer io.Writer) error {
	var tick <-chan time.Time
	if s.live {
		ticker := time.NewTicker(s.p.spec.Settle)
		defer ticker.Stop()
		tick = ticker.C
	}
	screen := NewScreen(int(s.p.spec.Term.Cols), int(s.p.spec.Term.Rows), answer)
	chunks, errc := readChunks(r)
	shown := ""
	show := func(text string) {
		if text != shown {
			shown = text
			s.emit(core.BlockEvent(s.p.block(text)))
		}
	}
	for reading := true; reading; {
		select {
		case c, ok := <-chunks:
			if !ok {
				reading = false
				break
			}
			screen.Write(c)
		case <-tick:
			show(screen.Settle())
		}
	}
	text := screen.Text()
	if text == "" {
		// A full-screen CLI leaves the alternate screen, and with it its
		// text, as it exits: keep what was shown.
		text = shown
	}
	show(text)
	s.findSession(text)
	return <-errc
}

// readChunks reads r in its own goroutine, so that a screen can settle
// between reads: each chunk, then the read error (nil at the end).
func readChunks(r io.Reader) (<-chan []byte, <-chan error) {
	chunks := make(chan []byte)
	errc := make(chan error, 1)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				chunks <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				errc <- err
				return
			}
		}
	}()
	return chunks, errc
}

func (p *Plugin) block(text string) core.ResponseBlock {
	if p.spec.Code {
		return core.ResponseBlock{Kind: core.BlockCode, ID: "terminal", Text: text}
	}
	return core.ResponseBlock{Kind: core.BlockText, ID: "terminal", Text: text}
}

// statePaths is the StateFunc of an entry's state: each path with "~/"
// and $VARs read from the CLI's environment, a file when it is one.
func statePaths(state []string) cliproc.StateFunc {
	return func(getenv func(string) string, _ string) []cliproc.StatePath {
		var out []cliproc.StatePath
		for _, p := range state {
			if rest, ok := strings.CutPrefix(p, "~/"); ok {
				p = filepath.Join(getenv("HOME"), rest)
			}
			p = os.Expand(p, getenv)
			fi, err := os.Stat(p)
			out = append(out, cliproc.StatePath{Path: p, File: err == nil && fi.Mode().IsRegular()})
		}
		return out
	}
}

package configured

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Plugin runs one configured CLI. It is safe for concurrent use.
type Plugin struct {
	spec   Spec
	logger *slog.Logger
}

var (
	_ core.Plugin          = (*Plugin)(nil)
	_ core.ResumeIDChecker = (*Plugin)(nil)
	_ core.SessionKeeper   = (*Plugin)(nil)
)

// New returns the plugin for spec. A nil logger discards.
func New(spec Spec, logger *slog.Logger) *Plugin {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
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
	return &Plugin{spec: spec, logger: logger}
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

// Conversations returns none: a configured CLI's history is its own.
func (p *Plugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	return nil, nil
}

// CheckResumeID accepts an id that can safely become an argument, for a
// CLI whose sessions can be resumed.
func (p *Plugin) CheckResumeID(id string) error {
	if !p.KeepsSessions() {
		return core.Errorf("%s cannot resume a session: each turn starts fresh", p.spec.Name)
	}
	if !tokenRE.MatchString(id) {
		return core.Errorf("%q is not a session id %s could use (letters, digits and ._:+=@- only)", id, p.spec.Name)
	}
	return nil
}

// Run runs one turn of the CLI.
func (p *Plugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	if !p.KeepsSessions() {
		t.ResumeToken = ""
	}
	cs := cliproc.Spec{Bin: p.spec.Bin, Args: p.spec.Argv(t), Dir: t.Workdir, Environ: p.spec.Environ, Env: p.spec.Env, Grace: p.spec.Grace}
	if p.spec.Mode == ModePTY {
		cs.PTY = &p.spec.Term
	}
	proc, err := cliproc.Start(ctx, cs)
	if errors.Is(err, cliproc.ErrNotFound) {
		return core.TurnResult{}, core.Errorf("%s CLI not found (%s). Install it, or fix its bin in the plugins file (%s)", p.spec.Name, p.spec.Bin, p.spec.Source)
	}
	if err != nil {
		return core.TurnResult{}, fmt.Errorf("start %s: %w", p.spec.ID, err)
	}
	var tick <-chan time.Time
	if p.spec.Mode == ModePTY {
		ticker := time.NewTicker(p.spec.Settle)
		defer ticker.Stop()
		tick = ticker.C
	}
	out, readErr := p.read(proc.Stdout, proc.Input, emit, tick)
	res, waitErr := proc.Wait()
	result := core.TurnResult{ResumeToken: out.Session, IsError: out.Errors > 0}
	switch {
	case ctx.Err() != nil:
		return result, ctx.Err()
	case waitErr != nil:
		return result, fmt.Errorf("wait for %s: %w", p.spec.ID, waitErr)
	case readErr != nil:
		return result, fmt.Errorf("read %s output: %w", p.spec.ID, readErr)
	case res.ExitCode != 0 && !result.IsError:
		return result, p.exitError(res, out.Text)
	}
	return result, nil
}

// Output is what reading a turn's output found.
type Output struct {
	// Session is the session id to resume, if one was found.
	Session string
	// Errors counts the error blocks emitted.
	Errors int
	// Text is a terminal's final text (pty mode).
	Text string
}

// ReadOutput turns a CLI's recorded output into events exactly as Run
// does while the CLI runs, but with no process: for jakebot replay. A
// terminal's screen is shown once, at the end.
func (p *Plugin) ReadOutput(r io.Reader, emit func(core.Event)) (Output, error) {
	return p.read(r, nil, emit, nil)
}

func (p *Plugin) read(r io.Reader, answer io.Writer, emit func(core.Event), tick <-chan time.Time) (Output, error) {
	switch p.spec.Mode {
	case ModeJSONL:
		j := &jsonlReader{m: p.spec.JSONL, emit: emit}
		err := p.lines(r, emit, j.line)
		if j.garbage > 0 {
			p.logger.Debug("lines that were not JSON objects", "count", j.garbage)
		}
		return Output{Session: j.session, Errors: j.errors}, err
	case ModePTY:
		return p.terminal(r, answer, emit, tick)
	}
	var out Output
	var all strings.Builder // the output so far, for a code block
	err := p.lines(r, emit, func(b []byte) {
		line := string(b)
		p.findSession(line, &out, emit)
		if p.spec.Code {
			all.WriteString(line + "\n")
			emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockCode, ID: "output", Text: all.String()}))
			return
		}
		emit(core.TextEvent(line + "\n"))
	})
	return out, err
}

// lines feeds every line of r to f; an oversized line is reported and
// skipped.
func (p *Plugin) lines(r io.Reader, emit func(core.Event), f func([]byte)) error {
	lr := cliproc.NewLineReader(r, cliproc.MaxLine)
	for {
		b, err := lr.Next()
		switch {
		case err == nil:
			f(b)
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, cliproc.ErrLineTooLong):
			emit(core.ErrorEvent(p.spec.Name + " printed an oversized line, skipped (" + err.Error() + ")"))
		default:
			return err
		}
	}
}

// terminal streams a pseudo-terminal's screen: on every tick the settled
// text, when it changed, replaces the reply's terminal block; at the end
// the whole screen does.
func (p *Plugin) terminal(r io.Reader, answer io.Writer, emit func(core.Event), tick <-chan time.Time) (Output, error) {
	screen := NewScreen(int(p.spec.Term.Cols), int(p.spec.Term.Rows), answer)
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
	var out Output
	shown := ""
	show := func(text string) {
		if text != shown {
			shown = text
			emit(core.BlockEvent(p.block(text)))
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
	out.Text = screen.Text()
	if out.Text == "" {
		// A full-screen CLI leaves the alternate screen, and with it its
		// text, as it exits: keep what was shown.
		out.Text = shown
	}
	show(out.Text)
	p.findSession(out.Text, &out, emit)
	return out, <-errc
}

func (p *Plugin) block(text string) core.ResponseBlock {
	if p.spec.Code {
		return core.ResponseBlock{Kind: core.BlockCode, ID: "terminal", Text: text}
	}
	return core.ResponseBlock{Kind: core.BlockText, ID: "terminal", Text: text}
}

// findSession takes the session id from text by the resume pattern; the
// last match wins.
func (p *Plugin) findSession(text string, out *Output, emit func(core.Event)) {
	if p.spec.Resume == nil {
		return
	}
	ms := p.spec.Resume.FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return
	}
	id := ms[len(ms)-1][1]
	if id == out.Session {
		return
	}
	if !tokenRE.MatchString(id) {
		p.logger.Warn("session id found by the resume pattern cannot be an argument; ignored", "id", id)
		return
	}
	out.Session = id
	emit(core.Event{Kind: core.EventSession, ResumeToken: id})
}

func (p *Plugin) exitError(res cliproc.Result, screen string) error {
	what := fmt.Sprintf("%s failed (exit code %d)", p.spec.Name, res.ExitCode)
	if res.ExitCode == -1 {
		what = p.spec.Name + " failed (killed by a signal)"
	}
	tail := cliproc.StderrTail(res.Stderr, 5)
	if tail == "" && p.spec.Mode == ModePTY {
		// The terminal's text is already shown above.
		return &core.UserError{Msg: what}
	}
	if tail != "" {
		what += ":\n" + strings.TrimSpace(tail)
	}
	return &core.UserError{Msg: what}
}

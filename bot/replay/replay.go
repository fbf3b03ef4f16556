package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// stallTimeout bounds how long Run waits for the coordinator to deliver
// one state; it only fires on a bug.
const stallTimeout = 30 * time.Second

// replayStart is where a replay's clock starts: any fixed time, so that
// the output is the same on every run.
var replayStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Run replays the recorded stream in through parser and prints, to out,
// each event and every message and edit platform would receive for it.
// The stream is parsed by the plugin's real parser, folded into a reply by
// a real core.StreamCoordinator and rendered by the platform's formatter,
// with a footer added at the end as the router does. Events are fed one at
// a time, each once the previous one is delivered, on a clock where every
// wait is over at once: the output is the same on every run, and shows
// every state the reply goes through (a live chat coalesces states that
// come faster than the platform's edit interval).
func Run(ctx context.Context, parser StreamParser, platform Platform, in io.Reader, out io.Writer) error {
	var events []core.Event
	res, err := parser.Parse(in, func(ev core.Event) { events = append(events, ev) })
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	pr := newPrinter(platform)
	// Waits are over at once: rate limits shape what is written, but
	// nobody waits for real.
	coord := core.NewStreamCoordinator(pr, core.NewInstantClock(replayStart), nil)
	reply := coord.NewReply(ctx, core.Target{Platform: platform.Name, Channel: "replay"})
	r := &run{ctx: ctx, out: out, pr: pr, reply: reply}
	// A platform that gets each page once, final, is written to only when
	// the reply closes.
	final := platform.Limits().FinalOnly

	for i, ev := range events {
		r.printf("event %d: %s\n", i+1, describe(ev))
		reply.Emit(ev)
		if changes(ev) && !final {
			if err := r.deliver(); err != nil {
				return err
			}
		}
	}
	footer := core.ResponseBlock{Kind: core.BlockFooter}
	if res != nil {
		footer.Duration, footer.CostUSD = res.Duration, res.CostUSD
		footer.InputTokens, footer.OutputTokens = res.InputTokens, res.OutputTokens
	}
	r.printf("end of turn: block %s\n", blockFields(footer))
	reply.Add(footer)
	if final {
		reply.Close(ctx)
	}
	if err := r.deliver(); err != nil {
		return err
	}
	reply.Close(ctx)

	if res == nil {
		r.printf("\nresult: none (the stream has no result)\n")
	} else {
		r.printf("\nresult: session=%q error=%v duration=%v cost=$%.6f tokens=%d/%d\n",
			res.SessionID, res.IsError, res.Duration, res.CostUSD, res.InputTokens, res.OutputTokens)
	}
	msgs := pr.messages()
	r.printf("final messages on %s (%d):\n", platform.Name, len(msgs))
	for i, m := range msgs {
		r.printf("message %d:\n%s", i+1, indent(m))
	}
	return r.err
}

type run struct {
	ctx   context.Context
	out   io.Writer
	pr    *printer
	reply *core.Reply
	// printed counts the writes printed so far.
	printed int
	err     error
}

func (r *run) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.out, format, args...)
	}
}

// deliver prints the platform's writes until its messages show the
// reply's current state.
func (r *run) deliver() error {
	blocks := r.reply.Blocks()
	want := r.pr.p.Render(blocks)
	timeout := time.NewTimer(stallTimeout)
	defer timeout.Stop()
	for {
		// Done once the state has arrived and every write is printed.
		if ok, n := r.pr.shows(want); ok && r.printed == n {
			return nil
		}
		select {
		case w := <-r.pr.c:
			r.printed++
			r.printf("  %s message %d [%s]\n%s", w.op, w.page, kinds(blocks), indent(w.text))
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-timeout.C:
			return errors.New("replay stalled: the coordinator did not deliver a state")
		}
	}
}

// changes reports whether ev changes a reply's blocks.
func changes(ev core.Event) bool {
	return ev.Kind == core.EventBlock || ev.Kind == core.EventText && ev.Text != ""
}

func describe(ev core.Event) string {
	switch ev.Kind {
	case core.EventText:
		return fmt.Sprintf("text %q", ev.Text)
	case core.EventBlock:
		return "block " + blockFields(ev.Block)
	case core.EventSession:
		return fmt.Sprintf("session %q model=%q", ev.SessionID, ev.Model)
	}
	return fmt.Sprintf("event kind %d", ev.Kind)
}

// blockFields writes a block's kind and its set fields.
func blockFields(b core.ResponseBlock) string {
	parts := []string{b.Kind.String()}
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", name, v))
		}
	}
	add("id", b.ID)
	add("tool", b.Tool)
	add("status", string(b.Status))
	add("text", core.Shorten(b.Text, 120))
	add("detail", b.Detail)
	add("language", b.Language)
	add("path", b.Path)
	add("action", b.Action)
	if b.Kind == core.BlockFooter {
		parts = append(parts, fmt.Sprintf("duration=%v cost=$%.6f tokens=%d/%d", b.Duration, b.CostUSD, b.InputTokens, b.OutputTokens))
	}
	return strings.Join(parts, " ")
}

// kinds lists the blocks' kinds, such as "text tool footer".
func kinds(blocks []core.ResponseBlock) string {
	var out []string
	for _, b := range blocks {
		out = append(out, b.Kind.String())
	}
	return strings.Join(out, " ")
}

// indent prefixes every line of a message so that its blank lines and
// edges stay visible.
func indent(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("    | " + line + "\n")
	}
	return b.String()
}

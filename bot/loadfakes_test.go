package bot_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/claude"
)

// synthClaude is the Claude plugin without a Claude process: each turn, a
// goroutine writes a stream-json stream into a pipe at a set pace, and the
// plugin's real reader and parser (claude.ReadStream, what Run puts a
// CLI's stdout through) turn it into events. The fake costs a line's
// formatting per event, so what the load curve measures is the bot.
type synthClaude struct {
	events, batch int
	gap           time.Duration
	// spread starts each stream at a random point of its first gap, as
	// independent conversations would; without it every conversation's
	// CLI writes at the same instants (the worst case for a burst).
	spread bool
}

func (synthClaude) ID() string   { return "claude" }
func (synthClaude) Name() string { return "Claude Code" }
func (synthClaude) Conversations(context.Context, string) ([]core.ConversationInfo, error) {
	return nil, nil
}

func (s synthClaude) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	pr, pw := io.Pipe()
	go s.write(ctx, pw)
	res, err := claude.ReadStream(pr, t.Workdir, emit)
	pr.Close()
	if err != nil {
		return core.TurnResult{}, err
	}
	if res == nil {
		return core.TurnResult{}, errors.New("synthetic stream ended without a result")
	}
	return *res, nil
}

// synthSessions numbers the fake sessions: each turn has its own, as a
// CLI's would (a runner stops the older turn of a session).
var synthSessions atomic.Int64

// synthLines are the lines of one synthetic stream; a delta is prefix,
// its text "<i>.<µs>; " (loadToken), suffix.
type synthLines struct{ init, prefix, suffix, result string }

func newSynthLines() synthLines {
	session := fmt.Sprintf("5f0c2a8e-1b3d-4c5e-8f90-%012d", synthSessions.Add(1))
	return synthLines{
		init:   `{"type":"system","subtype":"init","cwd":"/","session_id":"` + session + `","model":"fake"}` + "\n",
		prefix: `{"type":"stream_event","event":{"delta":{"text":"`,
		suffix: `","type":"text_delta"},"index":0,"type":"content_block_delta"},"session_id":"` + session + `","parent_tool_use_id":null}` + "\n",
		result: `{"type":"result","subtype":"success","is_error":false,"duration_ms":1200,"num_turns":1,"result":"done","session_id":"` +
			session + `","total_cost_usd":0.0125}` + "\n",
	}
}

// write writes the stream, batch deltas at a time every gap, as one
// write each, the way a CLI flushes its stdout.
func (s synthClaude) write(ctx context.Context, w *io.PipeWriter) {
	l := newSynthLines()
	buf := []byte(l.init)
	var tick *time.Ticker
	if s.gap > 0 {
		if s.spread {
			select {
			case <-time.After(rand.N(s.gap)):
			case <-ctx.Done():
				w.CloseWithError(ctx.Err())
				return
			}
		}
		tick = time.NewTicker(s.gap)
		defer tick.Stop()
	}
	for i := range s.events {
		buf = append(buf, l.prefix...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, '.')
		buf = strconv.AppendInt(buf, time.Now().UnixMicro()%loadWrap, 10)
		buf = append(buf, "; "...)
		buf = append(buf, l.suffix...)
		if i%s.batch != s.batch-1 && i != s.events-1 {
			continue
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		buf = buf[:0]
		if tick != nil && i != s.events-1 {
			select {
			case <-tick.C:
			case <-ctx.Done():
				w.CloseWithError(ctx.Err())
				return
			}
		}
	}
	buf = append(buf, l.result...)
	w.Write(buf)
	w.Close()
}

// loadPlatform is a platform fake that keeps, per channel, the writes it
// got (time, message and text) and nothing else, behind one lock per
// channel: a shared lock or log would be the fake's limit, not the bot's.
type loadPlatform struct {
	name string
	lim  core.Limits
	// keep false counts writes without keeping them (the idle step).
	keep   bool
	next   atomic.Int64
	writes atomic.Int64
	logs   sync.Map // channel → *channelLog
}

type channelLog struct {
	mu    sync.Mutex
	calls []platformtest.Call
}

func newLoadPlatform(name string, lim core.Limits, keep bool) *loadPlatform {
	return &loadPlatform{name: name, lim: lim, keep: keep}
}

func (p *loadPlatform) Name() string        { return p.name }
func (p *loadPlatform) Limits() core.Limits { return p.lim }
func (p *loadPlatform) Render(blocks []core.ResponseBlock) []string {
	return formatter.Markdown(blocks, 2000)
}
func (p *loadPlatform) Run(ctx context.Context, _ core.Handler) error { <-ctx.Done(); return nil }

func (p *loadPlatform) Send(_ context.Context, to core.Target, text string) (core.MessageRef, error) {
	ref := core.MessageRef{Target: to, ID: p.name + "-" + strconv.FormatInt(p.next.Add(1), 10)}
	p.write("send", ref, text)
	return ref, nil
}

func (p *loadPlatform) Edit(_ context.Context, ref core.MessageRef, text string) error {
	p.write("edit", ref, text)
	return nil
}

func (p *loadPlatform) write(op string, ref core.MessageRef, text string) {
	p.writes.Add(1)
	if !p.keep {
		return
	}
	at := time.Now()
	l, ok := p.logs.Load(ref.Target.Channel)
	if !ok {
		l, _ = p.logs.LoadOrStore(ref.Target.Channel, &channelLog{})
	}
	log := l.(*channelLog)
	log.mu.Lock()
	log.calls = append(log.calls, platformtest.Call{Op: op, At: at, Ref: ref, Text: text})
	log.mu.Unlock()
}

// calls returns every write, channel by channel, each channel's in order.
func (p *loadPlatform) calls() []platformtest.Call {
	var all []platformtest.Call
	p.logs.Range(func(_, l any) bool {
		log := l.(*channelLog)
		log.mu.Lock()
		all = append(all, log.calls...)
		log.mu.Unlock()
		return true
	})
	return all
}

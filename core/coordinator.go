package core

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/jake-bot/jake-bot/core/recent"
)

// StreamCoordinator turns a turn's events into a platform's messages: it
// posts the reply as soon as there is something to show, then edits it as
// more arrives, no faster than the platform's Limits allow, and continues in
// new messages when the rendered reply outgrows one. It is safe for
// concurrent use; each Reply has its own sender goroutine.
type StreamCoordinator struct {
	platform Platform
	limits   Limits
	clock    Clock
	logger   *slog.Logger
	// obs is told of every write; the router sets it before any reply.
	obs Observer
	// redact blanks the bot's secrets out of every page; the router sets
	// it before any reply.
	redact *Redactor
	// longPages and document, set by the router before any reply, make
	// an answer longer than longPages messages its first page, a note and
	// the whole of it as a Markdown file (document renders it), on a
	// platform that sends files. Zero or nil: every page is a message.
	longPages int
	document  func([]ResponseBlock) string

	// channels holds the limiter of each channel written to lately; one
	// forgotten is made anew, full, which the platform's own limit bears.
	channels *recent.Map[string, *rate.Limiter]
}

// maxChannelLimiters bounds how many channels' limiters are kept.
const maxChannelLimiters = 4096

// NewStreamCoordinator returns a coordinator for p. A nil clock is the
// system clock; a nil logger discards.
func NewStreamCoordinator(p Platform, clock Clock, logger *slog.Logger) *StreamCoordinator {
	if clock == nil {
		clock = SystemClock{}
	}
	return &StreamCoordinator{
		platform: p,
		limits:   p.Limits(),
		clock:    clock,
		logger:   OrDiscard(logger),
		obs:      nopObserver{},
		channels: recent.New[string, *rate.Limiter](maxChannelLimiters),
	}
}

// channelLimiter returns the limiter shared by every reply in one channel.
func (c *StreamCoordinator) channelLimiter(t Target) *rate.Limiter {
	if c.limits.ChannelInterval <= 0 {
		return nil
	}
	lim, ok := c.channels.Get(t.Channel)
	if !ok {
		lim = rate.NewLimiter(rate.Every(c.limits.ChannelInterval), max(1, c.limits.ChannelBurst))
		if !c.channels.Add(t.Channel, lim) {
			if made, ok := c.channels.Get(t.Channel); ok {
				lim = made // another reply made it first
			}
		}
	}
	return lim
}

// Reply is one streamed answer. Emit may be called from one goroutine at a
// time; Close from any.
type Reply struct {
	c      *StreamCoordinator
	ctx    context.Context
	target Target
	chanLm *rate.Limiter

	mu      sync.Mutex
	content replyBlocks
	version int
	closed  bool

	// Owned by the sender goroutine.
	pushed int
	// notBefore is when the pending wake-up timer fires; until then
	// events only accumulate.
	notBefore time.Time
	// timerSet is true while a wake-up timer is pending, so that Emit
	// need not wake the sender.
	timerSet atomic.Bool
	pages    []sentPage
	// long is how many pages the closed reply rendered to when that was
	// over longPages; folded says longPages folded the pages while it
	// streamed; pushedFinal says the closed reply's state was pushed.
	long        int
	folded      bool
	pushedFinal bool
	retryAt     time.Time
	// lastEdit is when the reply last edited a message; edits keep
	// Limits.EditInterval apart, counted in whole clock time rather than a
	// rate limiter's float tokens, which allow an edit a nanosecond early.
	lastEdit time.Time
	failures int

	wake chan struct{}
	done chan struct{}
}

type sentPage struct {
	ref  MessageRef
	text string
}

// NewReply starts a reply in target. ctx bounds delivery (not the turn): a
// turn that is stopped still gets its last state delivered.
func (c *StreamCoordinator) NewReply(ctx context.Context, target Target) *Reply {
	r := &Reply{
		c:       c,
		ctx:     ctx,
		target:  target,
		chanLm:  c.channelLimiter(target),
		content: replyBlocks{redact: c.redact},
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	go r.send()
	return r
}

// Emit folds one event into the reply.
func (r *Reply) Emit(ev Event) {
	r.mu.Lock()
	switch ev.Kind {
	case EventText:
		if ev.Text == "" {
			r.mu.Unlock()
			return
		}
		if !r.content.continuesText() {
			// Blocks are set apart by the formatter; a new text block's
			// leading blank lines (a plugin's paragraph break) would
			// double that.
			ev.Text = strings.TrimLeft(ev.Text, "\n")
			if ev.Text == "" {
				r.mu.Unlock()
				return
			}
		}
		r.content.appendText(ev.Text)
	case EventBlock:
		r.content.put(ev.Block)
	default:
		r.mu.Unlock()
		return
	}
	r.version++
	r.mu.Unlock()
	// Waking the sender costs a context switch per event; there is no
	// point while it only waits for the end or for its timer.
	if !r.c.limits.FinalOnly && !r.timerSet.Load() {
		r.poke()
	}
}

// Add appends or replaces a block, like an EventBlock event.
func (r *Reply) Add(b ResponseBlock) { r.Emit(BlockEvent(b)) }

// Blocks returns a copy of the blocks so far (bounded: see ReplyHeadBytes).
func (r *Reply) Blocks() []ResponseBlock {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.content.blocks()
}

// Close marks the reply complete and waits until its final state has been
// delivered or ctx (or the delivery context) is done.
func (r *Reply) Close(ctx context.Context) {
	r.mu.Lock()
	if !r.closed && r.content.held != "" {
		r.content.release()
		r.version++
	}
	r.closed = true
	r.mu.Unlock()
	r.poke()
	select {
	case <-r.done:
	case <-ctx.Done():
	}
}

func (r *Reply) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// send is the reply's sender goroutine: it pushes the newest state whenever
// it changes and the limiters allow, and exits once the closed reply is
// fully delivered.
func (r *Reply) send() {
	defer close(r.done)
	for {
		select {
		case <-r.wake:
		case <-r.ctx.Done():
			return
		}
		for {
			r.mu.Lock()
			closed, version := r.closed, r.version
			r.mu.Unlock()
			// A folded reply's pages change when it closes, its blocks not.
			pushed := version == r.pushed && (!closed || !r.folded || r.pushedFinal)
			if pushed || (r.c.limits.FinalOnly && !closed) {
				if closed {
					r.attachLong()
					return
				}
				break
			}
			now := r.c.clock.Now()
			if now.Before(r.notBefore) {
				// A limiter said not yet and a timer will wake us: do not
				// render the whole reply again for every event meanwhile.
				break
			}
			wait := r.push(version, closed)
			if wait > 0 {
				// push measured wait from its own reading of the clock.
				r.notBefore = r.c.clock.Now().Add(wait)
				r.timerSet.Store(true)
				r.c.clock.AfterFunc(wait, func() {
					r.timerSet.Store(false)
					r.poke()
				})
				break
			}
		}
	}
}

// maxFailures is how often a write may fail (other than by rate limiting)
// before the sender gives up on the current state and waits for the next.
const maxFailures = 3

// push renders the blocks and sends or edits every page that changed. It
// returns how long to wait when a limiter or the platform said not yet.
//
// The limiters are asked at the time of each write, read just before it:
// rendering a long reply, or writing the previous page, takes time, and a
// token taken at an earlier reading of the clock would let two writes land
// closer together than the limit allows.
func (r *Reply) push(version int, closed bool) time.Duration {
	if now := r.c.clock.Now(); now.Before(r.retryAt) {
		return r.retryAt.Sub(now)
	}
	pages := r.longPages(capPages(r.c.platform.Render(r.c.redact.redactBlocks(r.Blocks()))), closed)
	for i, text := range pages {
		if i < len(r.pages) && r.pages[i].text == text {
			continue
		}
		editing := i < len(r.pages)
		now := r.c.clock.Now()
		if editing && !r.lastEdit.IsZero() {
			if d := r.lastEdit.Add(r.c.limits.EditInterval).Sub(now); d > 0 {
				return d
			}
		}
		if d := delay(r.chanLm, now); d > 0 {
			return d
		}
		if editing {
			r.lastEdit = now
		}
		if err := r.write(i, text, editing); err != nil {
			if rl, ok := AsRateLimit(err); ok {
				r.c.obs.Delivery(r.target.Platform, DeliveryRateLimited)
				r.retryAt = now.Add(rl.RetryAfter)
				r.c.logger.Info("rate limited", "target", r.target.Channel, "retry_after", rl.RetryAfter)
				return max(rl.RetryAfter, time.Millisecond)
			}
			r.failures++
			r.c.obs.Delivery(r.target.Platform, DeliveryFailed)
			r.c.logger.Warn("deliver reply", "target", r.target.Channel, "err", err, "failures", r.failures)
			if r.failures >= maxFailures {
				r.failures = 0
				r.pushed, r.pushedFinal = version, closed
				return 0
			}
			return time.Duration(r.failures) * 500 * time.Millisecond
		}
		r.failures = 0
	}
	r.pushed, r.pushedFinal = version, closed
	return 0
}

// write sends page i, or edits it when it was sent before. An edit the
// platform refuses for a reason other than rate limiting is tried again
// (push waits between tries): a platform's 5xx or a request that timed out
// passes, and a new message would leave the reply's first part shown
// twice, in the old one and the new. One refused maxFailures-1 times in a
// row (the message deleted) is sent as a new message, so a reply never
// stays stuck on an old state.
func (r *Reply) write(i int, text string, editing bool) error {
	if editing {
		err := r.c.platform.Edit(r.ctx, r.pages[i].ref, text)
		if err == nil {
			r.c.obs.Delivery(r.target.Platform, DeliveryEdit)
			r.pages[i].text = text
			return nil
		}
		if _, ok := AsRateLimit(err); ok || r.ctx.Err() != nil || r.failures < maxFailures-2 {
			return err
		}
		r.c.logger.Warn("edit failed, sending as a new message", "err", err)
	}
	ref, err := r.c.platform.Send(r.ctx, r.target, text)
	if err != nil {
		return err
	}
	r.c.obs.Delivery(r.target.Platform, DeliverySend)
	if editing {
		r.pages[i] = sentPage{ref, text}
	} else {
		r.pages = append(r.pages, sentPage{ref, text})
	}
	return nil
}

// MaxPages bounds how many messages one reply takes, so that a runaway CLI
// cannot flood a channel: beyond it the middle of the output is replaced
// by a note, and the first pages and the last (with the turn's end) stay.
const MaxPages = 20

func capPages(pages []string) []string {
	if len(pages) <= MaxPages {
		return pages
	}
	out := append([]string(nil), pages[:MaxPages-2]...)
	cut := len(pages) - (MaxPages - 1)
	out = append(out, fmt.Sprintf("⚠️ _… %d more messages of output were cut here (at most %d per reply) …_", cut, MaxPages))
	return append(out, pages[len(pages)-1])
}

// attached is a platform as the router attached it (Router.Attach): the
// platform and the coordinator of its replies.
type attached struct {
	p     Platform
	coord *StreamCoordinator
}

// platformSet is the attached platforms by name; it is safe for
// concurrent use.
type platformSet struct {
	mu     sync.Mutex
	byName map[string]*attached
}

func (s *platformSet) add(a *attached) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byName[a.p.Name()] = a
}

// get returns the platform attached as name, or nil.
func (s *platformSet) get(name string) *attached {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byName[name]
}

package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// feed holds the messages of one turn that came and are not applied yet:
// its reader never waits on the chat, and the turn's follower takes all
// that came since it last looked at once, as one batch (one save of the
// turn's record for them all).
type feed struct {
	mu    sync.Mutex
	parts []feedPart
	ended bool
	// ready holds a token while there may be something to take.
	ready chan struct{}
}

func newFeed() *feed { return &feed{ready: make(chan struct{}, 1)} }

// feedPart is a turn's part of a message of the stream, and the
// message's place there.
type feedPart struct {
	tm        *turnMessage
	streamSeq uint64
}

func (f *feed) put(p feedPart) {
	f.mu.Lock()
	f.parts = append(f.parts, p)
	f.mu.Unlock()
	f.poke()
}

// end says no message will come any more.
func (f *feed) end() {
	f.mu.Lock()
	f.ended = true
	f.mu.Unlock()
	f.poke()
}

func (f *feed) poke() { poke(f.ready) }

// poke leaves a token in ch, a channel of one, unless one waits there.
func poke(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// take returns the parts that came since the last take, in order, and
// whether none will come after them.
func (f *feed) take() ([]feedPart, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := f.parts
	f.parts = nil
	return parts, f.ended
}

// eventBatch is a message of the stream: parts of a runner's turns.
type eventBatch struct {
	Parts []turnMessage `json:"parts"`
}

// decodeBatch decodes m, a message of the stream, into its parts, and
// returns its place there; it logs one it cannot read (which its turns
// see as a gap).
func decodeBatch(m jetstream.Msg, logger interface{ Warn(string, ...any) }) ([]turnMessage, uint64) {
	var seq uint64
	if meta, err := m.Metadata(); err == nil {
		seq = meta.Sequence.Stream
	}
	var b eventBatch
	if err := json.Unmarshal(m.Data(), &b); err != nil {
		logger.Warn("a malformed message in the event stream", "subject", m.Subject(), "seq", seq, "err", err)
		return nil, seq
	}
	return b.Parts, seq
}

// runnerOf is the runner whose event subject subject is.
func runnerOf(subject string) string {
	rest, ok := strings.CutPrefix(subject, prefix+"runner.")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, ".")
	return name
}

// eventReader reads the messages of every turn this gateway starts with
// one consumer of the event stream, and hands each to its turn's feed.
// A consumer per turn cost two JetStream API requests per turn (create,
// delete), each bounded by requestTimeout: under load (1,000 turns at
// once through a runner, issue 33) creating them took longer, and turns
// failed with "follow turn …: context deadline exceeded".
type eventReader struct {
	mu    sync.Mutex
	feeds map[string]followed // by turn id
	// read is the place in the stream of the last message read: a turn
	// started after it has its messages after it.
	read   uint64
	logger interface{ Warn(string, ...any) }
	// stopped: the reader ended; a feed opened now gets nothing.
	stopped bool
	quit    func()
}

// readEvents starts reading the event stream from the message after
// last, the stream's last when the gateway started: every turn it starts
// comes after.
func (g *Gateway) readEvents(ctx context.Context, last uint64) error {
	cons, err := g.js.OrderedConsumer(ctx, eventStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{eventSubjects()},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: last + 1})
	if err != nil {
		return fmt.Errorf("read stream %s: %w", eventStream, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("read stream %s: %w", eventStream, err)
	}
	r := &eventReader{feeds: map[string]followed{}, read: last, logger: g.cfg.Logger}
	done := make(chan struct{})
	r.quit = func() {
		it.Stop()
		<-done
		g.deleteConsumer(cons)
	}
	go func() {
		defer close(done)
		for {
			m, err := it.Next()
			if err != nil {
				r.stop()
				return
			}
			r.deliver(m)
		}
	}()
	g.events = r
	return nil
}

// followed is a turn the gateway follows: where its parts go, and the
// runner they must come from.
type followed struct {
	feed   *feed
	runner string
}

func (r *eventReader) deliver(m jetstream.Msg) {
	parts, seq := decodeBatch(m, r.logger)
	runner := runnerOf(m.Subject())
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read = max(r.read, seq)
	for i := range parts {
		// A runner's parts count for its own turns only: no runner can
		// write into another's.
		if t, ok := r.feeds[parts[i].Turn]; ok && t.runner == runner {
			t.feed.put(feedPart{tm: &parts[i], streamSeq: seq})
		}
	}
}

// open is the feed of turn id on runner, from now, and the place in the
// stream after which its messages come.
func (r *eventReader) open(id, runner string) (*feed, uint64) {
	f := newFeed()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		f.end()
		return f, r.read
	}
	r.feeds[id] = followed{feed: f, runner: runner}
	return f, r.read
}

// forget stops handing turn id's parts to its feed.
func (r *eventReader) forget(id string) {
	r.mu.Lock()
	delete(r.feeds, id)
	r.mu.Unlock()
}

// stop ends every feed: their turns end saying their messages stopped
// coming.
func (r *eventReader) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	for _, t := range r.feeds {
		t.feed.end()
	}
}

// close stops reading, and deletes the consumer.
func (r *eventReader) close() {
	r.quit()
}

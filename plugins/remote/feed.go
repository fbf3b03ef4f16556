package remote

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// feed holds the messages of one turn that came and are not applied yet:
// its reader never waits on the chat, and the turn's follower takes all
// that came since it last looked at once, as one batch (one save of the
// turn's record for them all).
type feed struct {
	mu    sync.Mutex
	msgs  []jetstream.Msg
	ended bool
	// ready holds a token while there may be something to take.
	ready chan struct{}
}

func newFeed() *feed { return &feed{ready: make(chan struct{}, 1)} }

func (f *feed) put(m jetstream.Msg) {
	f.mu.Lock()
	f.msgs = append(f.msgs, m)
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

// take returns the messages that came since the last take, in order, and
// whether none will come after them.
func (f *feed) take() ([]jetstream.Msg, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	msgs := f.msgs
	f.msgs = nil
	return msgs, f.ended
}

// eventReader reads the messages of every turn this gateway starts with
// one consumer of the event stream, and hands each to its turn's feed.
// A consumer per turn cost two JetStream API requests per turn (create,
// delete), each bounded by requestTimeout: under load (1,000 turns at
// once through a runner, issue 33) creating them took longer, and turns
// failed with "follow turn …: context deadline exceeded".
type eventReader struct {
	mu    sync.Mutex
	feeds map[string]*feed // by the turn's event subject
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
	r := &eventReader{feeds: map[string]*feed{}}
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

func (r *eventReader) deliver(m jetstream.Msg) {
	r.mu.Lock()
	f := r.feeds[m.Subject()]
	r.mu.Unlock()
	if f != nil { // else a turn this gateway does not follow
		f.put(m)
	}
}

// open is the feed of the turn whose messages come on subject, from now.
func (r *eventReader) open(subject string) *feed {
	f := newFeed()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		f.end()
		return f
	}
	r.feeds[subject] = f
	return f
}

// forget stops handing subject's messages to its feed.
func (r *eventReader) forget(subject string) {
	r.mu.Lock()
	delete(r.feeds, subject)
	r.mu.Unlock()
}

// stop ends every feed: their turns end saying their messages stopped
// coming.
func (r *eventReader) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	for _, f := range r.feeds {
		f.end()
	}
}

// close stops reading, and deletes the consumer.
func (r *eventReader) close() {
	r.quit()
}

package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
)

// Publishing a turn's messages: one try's bound, the waits between tries,
// and how long a runner that is stopping goes on trying.
const (
	publishTimeout = 5 * time.Second
	publishRetry   = 250 * time.Millisecond
	publishMaxWait = 5 * time.Second
	publishGrace   = 5 * time.Second
)

// maxBatch bounds the events one turn message carries, well below NATS's
// default 1 MB payload; a server with a smaller max_payload bounds them
// further (outbox.room).
const maxBatch = 256 << 10

// outbox sends a turn's messages into the event stream, in order and
// numbered: each is stored before the next goes, so the stream holds them
// in order, and one a failed try may not have stored goes again under the
// same message id, which the stream keeps once. Events that come while a
// message is on its way go together in the next.
type outbox struct {
	r       *Runner
	id      string
	subject string
	// stopping is closed when the runner stops: from then on it tries
	// for publishGrace only.
	stopping <-chan struct{}

	mu      sync.Mutex
	pending []queuedEvent
	end     *turnMessage
	wake    chan struct{}
	done    chan struct{}
	seq     int // the sender's
}

func newOutbox(r *Runner, id string, stopping <-chan struct{}) *outbox {
	o := &outbox{r: r, id: id, subject: turnSubject(r.cfg.Name, id, "event"), stopping: stopping,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go o.send()
	return o
}

// queuedEvent is an event waiting in the outbox, and its JSON: each
// event is encoded once, when it comes, which tells its size too.
type queuedEvent struct {
	we   *wireEvent
	data []byte
}

func queued(we *wireEvent) queuedEvent {
	data, _ := json.Marshal(we) // nothing in a wireEvent fails to encode
	return queuedEvent{we: we, data: data}
}

// add queues an event (its secrets blanked out already).
func (o *outbox) add(we wireEvent) {
	q := queued(&we)
	o.mu.Lock()
	o.pending = append(o.pending, q)
	o.mu.Unlock()
	o.poke()
}

// finish queues the turn's end; done is closed once it is sent. An error
// long enough (a CLI's stderr) to crowd out the rest is cut short.
func (o *outbox) finish(res core.TurnResult, err *wireError) {
	// JSON may make a byte six: at most a fifth of a message.
	if limit := o.room() / 32; err != nil && len(err.Message) > limit {
		err.Message = cutText(err.Message, limit)
	}
	o.mu.Lock()
	o.end = &turnMessage{Done: true, Result: &res, Error: err}
	o.mu.Unlock()
	o.poke()
}

func (o *outbox) poke() { poke(o.wake) }

func (o *outbox) send() {
	defer close(o.done)
	for {
		m, data, last := o.next()
		if m == nil {
			<-o.wake
			continue
		}
		if data != nil {
			o.publish(m.Seq, data)
		}
		if last {
			return
		}
	}
}

// next takes what is queued as the next message, encoded: events up to
// maxBatch bytes, and the end once every event is in.
func (o *outbox) next() (*turnMessage, []byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) == 0 && o.end == nil {
		return nil, nil, false
	}
	m := &turnMessage{}
	var events [][]byte
	size, room := 0, o.room()
	for len(o.pending) > 0 {
		q := o.pending[0]
		if len(q.data) > room {
			// Too large for any message: text goes in pieces, anything
			// else is cut short.
			var pieces []queuedEvent
			for _, we := range o.fit(*q.we, room) {
				pieces = append(pieces, queued(&we))
			}
			o.pending = append(pieces, o.pending[1:]...)
			q = o.pending[0]
		}
		if len(events) > 0 && size+len(q.data) > room {
			break
		}
		events, size = append(events, q.data), size+len(q.data)
		o.pending[0] = queuedEvent{}
		o.pending = o.pending[1:]
	}
	last := len(o.pending) == 0 && o.end != nil
	if last {
		m.Done, m.Result, m.Error = true, o.end.Result, o.end.Error
	}
	o.seq++
	m.Seq = o.seq
	data, err := encodeTurnMessage(m, events)
	if err != nil {
		o.r.logger.Error("turn message not encoded", "id", o.id, "seq", m.Seq, "err", err)
	}
	return m, data, last
}

// encodeTurnMessage is m as JSON with events, each encoded already, as its
// events: the outbox encodes an event once, when it comes.
func encodeTurnMessage(m *turnMessage, events [][]byte) ([]byte, error) {
	head, err := json.Marshal(m) // m.Events is empty: left out
	if err != nil || len(events) == 0 {
		return head, err
	}
	n := len(head) + len(`,"events":[]`) + len(events)
	for _, e := range events {
		n += len(e)
	}
	data := make([]byte, 0, n)
	data = append(data, head[:len(head)-1]...) // all but its closing brace
	data = append(data, `,"events":[`...)
	for i, e := range events {
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, e...)
	}
	return append(data, "]}"...), nil
}

// room is the most event bytes one message may carry.
func (o *outbox) room() int {
	return min(maxBatch, room(o.r.nc))
}

// fit makes an event larger than room into events that fit: a text event
// into pieces of its text (JSON may make a byte six), anything else into
// itself with its longest texts cut short, saying so, or, when what is
// too large is not a text to cut (a question's options, ids), into a
// warning in its place.
func (o *outbox) fit(we wireEvent, room int) []wireEvent {
	if we.Kind == core.EventText && we.Text != "" {
		var out []wireEvent
		piece := max(1, (room-eventSize(wireEvent{Kind: core.EventText}))/6)
		for text := we.Text; text != ""; {
			n := min(len(text), piece)
			for n < len(text) && n > 0 && !utf8.RuneStart(text[n]) {
				n--
			}
			if n == 0 {
				n = min(len(text), piece)
			}
			out = append(out, wireEvent{Kind: core.EventText, Text: text[:n]})
			text = text[n:]
		}
		return out
	}
	size := eventSize(we)
	if q := we.Question; q != nil {
		c := *q // the event's own copy to cut
		we.Question = &c
	}
	for excess := size - room; excess > 0; excess = eventSize(we) - room {
		longest := longestText(&we)
		if len(*longest) <= minCut {
			return []wireEvent{{Kind: core.EventBlock, Block: core.ResponseBlock{Kind: core.BlockWarning,
				Text: fmt.Sprintf("an event of %d bytes was too large to send from runner %s", size, o.r.cfg.Name)}}}
		}
		// A byte cut is at least a byte less of JSON; the note takes some.
		*longest = cutText(*longest, max(0, len(*longest)-excess-128))
	}
	return []wireEvent{we}
}

// minCut is the shortest text fit cuts: a shorter one would gain less
// than its note takes.
const minCut = 256

// longestText points at the longest of an event's texts that may be cut
// short: what the chat shows, never an id or an option to answer with.
func longestText(we *wireEvent) *string {
	texts := []*string{&we.Text, &we.Block.Text, &we.Block.Detail}
	if q := we.Question; q != nil {
		texts = append(texts, &q.Summary, &q.Detail)
	}
	longest := texts[0]
	for _, t := range texts[1:] {
		if len(*t) > len(*longest) {
			longest = t
		}
	}
	return longest
}

// cutText keeps s's first n bytes, whole runes, and says how much is cut.
func cutText(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n… (%d bytes cut: too large for one NATS message)", len(s)-n)
}

func eventSize(we wireEvent) int {
	data, _ := json.Marshal(we)
	return len(data)
}

// publish stores turn message seq, data, in the stream, trying again
// until it is stored, or the runner is stopping and publishGrace has
// passed.
func (o *outbox) publish(seq int, data []byte) {
	msgID := o.id + "." + strconv.Itoa(seq)
	wait := publishRetry
	var giveUp <-chan time.Time
	for {
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		_, err := o.r.js.Publish(ctx, o.subject, data, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(eventStream))
		cancel()
		if err == nil {
			return
		}
		if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrMaxPayload) {
			// Never stored, however often tried: the gateway sees the gap.
			o.r.logger.Error("turn message lost", "id", o.id, "seq", seq, "err", err)
			return
		}
		o.r.logger.Warn("turn message not stored yet; trying again", "id", o.id, "seq", seq, "err", err, "in", wait)
		select {
		case <-time.After(wait):
		case <-o.stopping:
			o.stopping, giveUp = nil, time.After(publishGrace)
		case <-giveUp:
			o.r.logger.Error("turn message lost: the runner stopped before it could be stored", "id", o.id, "seq", seq)
			return
		}
		wait = min(2*wait, publishMaxWait)
	}
}

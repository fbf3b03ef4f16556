package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
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

// maxBatch bounds the events one message of the stream carries, well
// below NATS's default 1 MB payload; a server with a smaller max_payload
// bounds them further (sender.room).
const maxBatch = 256 << 10

// partRoom is what a turn's part of a message takes besides its events
// and its end: the turn's id and its number.
const partRoom = 128

// outbox queues a turn's events for the runner's sender, which puts them
// into the event stream as the turn's numbered parts, in order. Events
// that come while a message is on its way go together in the next.
type outbox struct {
	s  *sender
	id string

	mu      sync.Mutex
	pending []queuedEvent
	end     *turnMessage
	endSize int // its JSON's
	// endTaken: the end is in a message; nothing comes after it.
	endTaken bool
	seq      int
	// done is closed once the turn's end is stored (or given up).
	done     chan struct{}
	doneOnce sync.Once
	// ready: the outbox is in its sender's queue, or on its way there.
	ready atomic.Bool
}

func newOutbox(s *sender, id string) *outbox {
	return &outbox{s: s, id: id, done: make(chan struct{})}
}

// queuedEvent is an event waiting in the outbox, as JSON: each event is
// encoded once, when it comes, which tells its size too (and keeps the
// garbage of a busy runner down: the event itself is not kept).
type queuedEvent struct {
	data []byte
}

func queued(we *wireEvent) queuedEvent {
	data, _ := json.Marshal(we) // nothing in a wireEvent fails to encode
	return queuedEvent{data: data}
}

// add queues an event (its secrets blanked out already).
func (o *outbox) add(we wireEvent) {
	q := queued(&we)
	o.mu.Lock()
	o.pending = append(o.pending, q)
	o.mu.Unlock()
	o.s.ready(o)
}

// finish queues the turn's end; done is closed once it is sent. An error
// long enough (a CLI's stderr) to crowd out the rest is cut short.
func (o *outbox) finish(res core.TurnResult, err *wireError) {
	// JSON may make a byte six: at most a fifth of a message.
	if limit := o.s.room() / 32; err != nil && len(err.Message) > limit {
		err.Message = cutText(err.Message, limit)
	}
	end := &turnMessage{Done: true, Result: &res, Error: err}
	data, _ := json.Marshal(end)
	o.mu.Lock()
	o.end, o.endSize = end, len(data)
	o.mu.Unlock()
	o.s.ready(o)
	if o.s.isGone() {
		o.abandon()
	}
}

// sent says the turn's end is sent (or given up).
func (o *outbox) sent() { o.doneOnce.Do(func() { close(o.done) }) }

// abandon gives the turn up, its sender gone: its end, once queued, waits
// for nothing.
func (o *outbox) abandon() {
	o.mu.Lock()
	end := o.end != nil
	o.mu.Unlock()
	if end {
		o.sent()
	}
}

// part appends the turn's next part to dst, encoded: its events that fit
// in room bytes (an event too large for any message goes in pieces, or
// cut), and the end once every event is in. It appends nothing when
// nothing is queued, or nothing fits and it is not the first part of its
// message; more says something is left.
func (o *outbox) part(dst []byte, room, full int, first bool) (data []byte, last, more bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) == 0 && o.end == nil || o.endTaken {
		return dst, false, false
	}
	// The end may come in this part: room for it.
	room, full = room-o.endSize, full-o.endSize
	if room < 0 && !first {
		return dst, false, true
	}
	var events [][]byte
	size := 0
	for len(o.pending) > 0 {
		q := o.pending[0]
		if len(q.data) > full {
			var we wireEvent
			json.Unmarshal(q.data, &we) // as encoded by queued
			var pieces []queuedEvent
			for _, we := range o.fit(we, full) {
				pieces = append(pieces, queued(&we))
			}
			o.pending = append(pieces, o.pending[1:]...)
			q = o.pending[0]
		}
		if size+len(q.data)+1 > room && (len(events) > 0 || !first) {
			break
		}
		events, size = append(events, q.data), size+len(q.data)+1
		o.pending[0] = queuedEvent{}
		o.pending = o.pending[1:]
	}
	last = len(o.pending) == 0 && o.end != nil
	if len(events) == 0 && !last {
		return dst, false, true
	}
	m := &turnMessage{Turn: o.id}
	if last {
		m.Done, m.Result, m.Error = true, o.end.Result, o.end.Error
		o.endTaken = true
	}
	o.seq++
	m.Seq = o.seq
	data, err := appendTurnMessage(dst, m, events)
	if err != nil {
		o.s.r.logger.Error("turn message not encoded", "id", o.id, "seq", m.Seq, "err", err)
		return dst, last, !last && len(o.pending) > 0
	}
	return data, last, !last && len(o.pending) > 0
}

// appendTurnMessage appends m to dst as JSON, with events, each encoded
// already, as its events: the outbox encodes an event once, when it
// comes. A part that is no end is written as it goes: it is most of a
// busy runner's messages.
func appendTurnMessage(dst []byte, m *turnMessage, events [][]byte) ([]byte, error) {
	if m.Done {
		head, err := json.Marshal(m) // m.Events is empty: left out
		if err != nil {
			return dst, err
		}
		dst = append(dst, head[:len(head)-1]...) // all but its closing brace
	} else {
		// A turn id is letters and digits (validName): nothing to escape.
		dst = append(dst, `{"turn":"`...)
		dst = append(dst, m.Turn...)
		dst = append(dst, `","seq":`...)
		dst = strconv.AppendInt(dst, int64(m.Seq), 10)
	}
	if len(events) > 0 {
		dst = append(dst, `,"events":[`...)
		for i, e := range events {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, e...)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// sender puts the runner's turn messages into the event stream: one
// message at a time, each carrying a part of every turn that has events
// waiting (as many as fit), stored before the next goes, so the stream
// holds every turn's parts in order; one a failed try may not have stored
// goes again under the same message id, which the stream keeps once. A
// message per turn was a JetStream publish, a store and a delivery for
// every few events: with 1,000 turns streaming through a runner they, not
// the events, were the hop's cost and its delay (issue 33).
type sender struct {
	r *Runner
	// id starts the messages' ids: random and never sent elsewhere, so
	// that no other runner can have this one's messages dropped as
	// duplicates by sending their ids first.
	id string
	// stopping is closed when the runner stops: from then on a message
	// is tried for publishGrace only.
	stopping <-chan struct{}

	// max is the most bytes one message carries: maxBatch, less where
	// the server's max_payload is smaller.
	max int

	// buf is the last message's, reused for the next (the sender's
	// goroutine's only).
	buf []byte

	mu    sync.Mutex
	queue []*outbox // with something to send, in the order they became so
	quit  bool
	gone  bool // the goroutine has ended
	wake  chan struct{}
	ended chan struct{}
	n     int // messages sent
}

func newSender(r *Runner, stopping <-chan struct{}) *sender {
	s := &sender{r: r, id: newID(), stopping: stopping, max: min(maxBatch, room(r.nc)),
		wake: make(chan struct{}, 1), ended: make(chan struct{})}
	go s.run()
	return s
}

// ready puts o in the queue, unless it is there: an event of a turn
// whose events wait already costs no lock of the sender's.
func (s *sender) ready(o *outbox) {
	if !o.ready.CompareAndSwap(false, true) {
		return
	}
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		o.abandon()
		return
	}
	s.queue = append(s.queue, o)
	s.mu.Unlock()
	poke(s.wake)
}

// isGone says the sender has ended.
func (s *sender) isGone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// end is the sender's goroutine's last step: a turn that comes later (one
// asked for as the runner stopped) sends nothing, and its end waits for
// nothing.
func (s *sender) end() {
	s.mu.Lock()
	s.gone = true
	left := s.queue
	s.queue = nil
	s.mu.Unlock()
	for _, o := range left {
		o.abandon()
	}
	close(s.ended)
}

// close ends the sender once nothing is waiting. The runner's turns have
// all ended, each once its end was sent.
func (s *sender) close() {
	s.mu.Lock()
	s.quit = true
	s.mu.Unlock()
	poke(s.wake)
	<-s.ended
}

func (s *sender) run() {
	defer s.end()
	for {
		data, ended, quit := s.next()
		if data == nil {
			if quit {
				return
			}
			<-s.wake
			continue
		}
		s.publish(data)
		for _, o := range ended {
			o.sent()
		}
	}
}

// next puts the next message together: a part of each turn queued, in
// turn, each taking at most an even share of the room left. It returns
// the turns whose end it carries.
func (s *sender) next() (data []byte, ended []*outbox, quit bool) {
	s.mu.Lock()
	queue := s.queue
	s.queue = nil
	quit = s.quit
	// Out of the queue while their parts are taken: an event that comes
	// meanwhile puts its outbox back.
	for _, o := range queue {
		o.ready.Store(false)
	}
	s.mu.Unlock()
	if len(queue) == 0 {
		return nil, nil, quit
	}
	full := s.room()
	// The message is put together in the buffer of the last: the
	// connection copied that when it was published.
	data = append(s.buf[:0], `{"parts":[`...)
	var keep []*outbox
	for i, o := range queue {
		// An even share of the room left: one turn with much to say
		// (a long tool output) does not keep the others waiting.
		share := (full - len(data)) / (len(queue) - i)
		last, more := false, true
		if share > partRoom {
			before, comma := len(data), len(data) > len(`{"parts":[`)
			if comma {
				data = append(data, ',')
			}
			if data, last, more = o.part(data, share-partRoom, full-partRoom, !comma); len(data) == before+1 && comma {
				data = data[:before] // no part after all
			}
		}
		if last {
			ended = append(ended, o)
		}
		if more {
			keep = append(keep, o)
		}
	}
	s.mu.Lock()
	// Those left go first next time, before the ones queued since (unless
	// an event put them back meanwhile).
	var first []*outbox
	for _, o := range keep {
		if o.ready.CompareAndSwap(false, true) {
			first = append(first, o)
		}
	}
	s.queue = append(first, s.queue...)
	s.mu.Unlock()
	s.buf = data
	if len(data) == len(`{"parts":[`) {
		return nil, ended, false
	}
	data = append(data, "]}"...)
	s.buf = data
	return data, ended, false
}

// room is the most bytes one message may carry.
func (s *sender) room() int { return s.max }

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
	if b := we.Block; b != nil {
		c := *b
		we.Block = &c
	}
	for excess := size - room; excess > 0; excess = eventSize(we) - room {
		longest := longestText(&we)
		if len(*longest) <= minCut {
			return []wireEvent{{Kind: core.EventBlock, Block: &core.ResponseBlock{Kind: core.BlockWarning,
				Text: fmt.Sprintf("an event of %d bytes was too large to send from runner %s", size, o.s.r.cfg.Name)}}}
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
	texts := []*string{&we.Text}
	if b := we.Block; b != nil {
		texts = append(texts, &b.Text, &b.Detail)
	}
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

// publish stores data, the next message, in the stream, trying again
// until it is stored, or the runner is stopping and publishGrace has
// passed.
func (s *sender) publish(data []byte) {
	s.n++
	msgID := s.id + "." + strconv.Itoa(s.n)
	subject := eventSubject(s.r.cfg.Name)
	wait := publishRetry
	stopping := s.stopping
	var giveUp <-chan time.Time
	for {
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		_, err := s.r.js.Publish(ctx, subject, data, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(eventStream))
		cancel()
		if err == nil {
			return
		}
		if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrMaxPayload) {
			// Never stored, however often tried: the gateway sees the gap.
			s.r.logger.Error("turn messages lost", "message", s.n, "err", err)
			return
		}
		s.r.logger.Warn("turn messages not stored yet; trying again", "message", s.n, "err", err, "in", wait)
		select {
		case <-time.After(wait):
		case <-stopping:
			stopping, giveUp = nil, time.After(publishGrace)
		case <-giveUp:
			s.r.logger.Error("turn messages lost: the runner stopped before they could be stored", "message", s.n)
			return
		}
		wait = min(2*wait, publishMaxWait)
	}
}

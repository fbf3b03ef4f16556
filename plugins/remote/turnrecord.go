package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
)

// turnRecord is a turn the gateway follows, kept in the turns bucket
// until its end is applied: a gateway that stops (or dies) mid-turn
// leaves it to the next, which follows it on from where it was. Seq is the
// last turn message applied to the chat and StreamSeq its place in the
// event stream, where following it again starts. Side is the turn's
// core.Turn.Side, which the next gateway hands back to its router (a
// helper's turn stays a helper's); a record written before it was kept
// has none, and a helper's turn in one is abandoned, its plugin not the
// conversation's.
type turnRecord struct {
	ID        string               `json:"id"`
	Runner    string               `json:"runner"`
	Plugin    string               `json:"plugin"`
	Name      string               `json:"name"`
	Admin     bool                 `json:"admin,omitempty"`
	Instance  string               `json:"instance"`
	Key       core.ConversationKey `json:"key"`
	From      string               `json:"from,omitempty"`
	UserName  string               `json:"user_name,omitempty"`
	Allowed   bool                 `json:"allowed,omitempty"`
	Text      string               `json:"text"`
	Seq       int                  `json:"seq"`
	StreamSeq uint64               `json:"stream_seq"`
	Side      json.RawMessage      `json:"side,omitempty"`
	// Unconfirmed says the runner's answer to the turn's start had not
	// come when the record was saved: a gateway that stops waiting for
	// it leaves the turn to the next, which first asks whether the
	// runner took it (confirmStarts). ByPerson says a person wrote Text,
	// for the notice of a turn that never started.
	Unconfirmed bool `json:"unconfirmed,omitempty"`
	ByPerson    bool `json:"by_person,omitempty"`

	// notStarted: the runner never took the turn (confirmStarts).
	notStarted bool
}

func (g *Gateway) saveTurn(rec *turnRecord) error {
	data, err := json.Marshal(rec)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		_, err = g.turns.Put(ctx, rec.ID, data)
	}
	if err != nil {
		return fmt.Errorf("keep turn %s in %s: %w", rec.ID, turnBucket, err)
	}
	return nil
}

func (g *Gateway) dropTurn(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := g.turns.Delete(ctx, id); err != nil {
		g.cfg.Logger.Warn("followed turn not dropped", "id", id, "err", err)
	}
}

// Unfinished hands over the turns an earlier gateway followed into
// platform's chats when it stopped.
func (g *Gateway) Unfinished(platform string) []core.UnfinishedTurn {
	g.mu.Lock()
	var out []core.UnfinishedTurn
	var keep []*turnRecord
	for _, rec := range g.unfinished {
		if rec.Key.Platform != platform {
			keep = append(keep, rec)
			continue
		}
		m := core.Message{Key: rec.Key, From: rec.From, UserName: rec.UserName, Allowed: rec.Allowed, Text: rec.Text}
		p := &remotePlugin{g: g, runner: rec.Runner, id: rec.Plugin, name: rec.Name, m: m, admin: rec.Admin, rec: rec}
		out = append(out, core.UnfinishedTurn{Message: m, Runner: rec.Runner, Plugin: p, Abandon: func() { p.stopTurn(rec) }, Side: rec.Side,
			NotStarted: rec.notStarted, ByPerson: rec.ByPerson})
	}
	g.unfinished = keep
	g.mu.Unlock()
	return out
}

// recordSaver keeps a followed turn's record up with the messages shown,
// in the background and at most every saveEvery: once a batch is shown,
// note saves the record as far as that batch, after the last save's
// saveEvery is over; batches shown meanwhile make one save, of the
// latest. Saving before showing, as the gateway once did, put a round
// trip to the key-value store into every event's way to the chat, and a
// save per batch cost the store (each put replaces the key's value) and
// the gateway more CPU than the events: under load (1,000 turns through
// a runner, issue 33) they were most of the runner hop's delay. The cost
// is in a crash only: the next gateway shows again what the dead one
// showed after its last save, at most saveEvery of the turn, where saving
// first lost what was saved and not shown. A gateway that stops shows
// nothing twice: it saves the last record before it goes.
type recordSaver struct {
	g *Gateway

	mu            sync.Mutex
	latest        turnRecord
	dirty, saving bool
	closed        bool
	lastSave      time.Time
	// idle is closed when the saving goroutine ends.
	idle chan struct{}
	// wake cuts the wait between saves short: the timer's end, or close.
	wake chan struct{}
}

// saveEvery bounds how often a followed turn's record is saved.
const saveEvery = time.Second

func newRecordSaver(g *Gateway) *recordSaver {
	return &recordSaver{g: g, wake: make(chan struct{}, 1)}
}

// note saves rec, a copy of it, once saveEvery has passed since the last
// save.
func (s *recordSaver) note(rec *turnRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.latest, s.dirty = *rec, true
	if !s.saving {
		wait := time.Duration(0)
		if !s.lastSave.IsZero() {
			wait = s.lastSave.Add(saveEvery).Sub(s.g.cfg.Clock.Now())
		}
		s.saving, s.idle = true, make(chan struct{})
		go s.save(s.idle, wait)
	}
}

// save waits, then saves the latest record noted, and goes on while
// there is more to save.
func (s *recordSaver) save(idle chan struct{}, wait time.Duration) {
	defer close(idle)
	for {
		s.pause(wait)
		s.mu.Lock()
		if !s.dirty {
			s.saving = false
			s.mu.Unlock()
			return
		}
		rec := s.latest
		s.dirty = false
		s.lastSave = s.g.cfg.Clock.Now()
		s.mu.Unlock()
		if err := s.g.saveTurn(&rec); err != nil {
			s.g.cfg.Logger.Warn("turn record", "err", err)
		}
		wait = saveEvery
	}
}

// pause waits for d, or less if the saver is closed.
func (s *recordSaver) pause(d time.Duration) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if d <= 0 || closed {
		return
	}
	t := s.g.cfg.Clock.AfterFunc(d, func() { poke(s.wake) })
	<-s.wake
	t.Stop()
}

// close ends the saving and waits for the save on its way: with last,
// the latest record noted is saved first, at once; without, it is
// dropped (the record is about to be deleted, and no save may come
// after that).
func (s *recordSaver) close(last bool) {
	s.mu.Lock()
	s.closed = true
	if !last {
		s.dirty = false
	}
	idle := s.idle
	s.mu.Unlock()
	poke(s.wake)
	if idle != nil {
		<-idle
	}
}

// turnMessages reads the messages of rec, a turn an earlier gateway
// followed, from the one after the last applied, with a consumer of its
// own: the gateway's reader starts after them.
func (g *Gateway) turnMessages(rec *turnRecord) (*feed, func(), error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{eventSubject(rec.Runner)},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: rec.StreamSeq + 1}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	cons, err := g.js.OrderedConsumer(ctx, eventStream, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("follow turn %s: %w", rec.ID, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, nil, fmt.Errorf("follow turn %s: %w", rec.ID, err)
	}
	msgs, done := newFeed(), make(chan struct{})
	go func() {
		defer close(done)
		defer msgs.end()
		for {
			m, err := it.Next()
			if err != nil {
				return
			}
			parts, seq := decodeBatch(m, g.cfg.Logger)
			for i := range parts {
				if parts[i].Turn == rec.ID {
					msgs.put(feedPart{tm: &parts[i], streamSeq: seq})
				}
			}
		}
	}()
	stop := func() {
		it.Stop()
		<-done
		g.deleteConsumer(cons)
	}
	return msgs, stop, nil
}

// deleteConsumer deletes the consumer a turn's messages were read with.
// The server keeps an ordered consumer five minutes after its reader
// stops, and allows a stream 1000 by default: a gateway that left them
// would be refused every turn after its thousandth in five minutes.
func (g *Gateway) deleteConsumer(cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := g.js.DeleteConsumer(ctx, eventStream, info.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		g.cfg.Logger.Warn("consumer not deleted; the server deletes it once idle for five minutes", "consumer", info.Name, "err", err)
	}
}

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

// stopGrace is how long a stopped turn may take to end on the runner
// (the CLI's own interrupt, then its kill) before the gateway gives up.
const stopGrace = 20 * time.Second

// turnRecord is a turn the gateway follows, kept in the turns bucket
// until its end is applied: a gateway that stops (or dies) mid-turn
// leaves it to the next, which follows it on from where it was. Seq is the
// last turn message applied to the chat and StreamSeq its place in the
// event stream, where following it again starts.
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
		out = append(out, core.UnfinishedTurn{Message: m, Runner: rec.Runner, Plugin: p, Abandon: func() { p.stopTurn(rec) }})
	}
	g.unfinished = keep
	g.mu.Unlock()
	return out
}

// remotePlugin is a plugin of a runner, as the router sees it for one
// user.
type remotePlugin struct {
	g      *Gateway
	runner string
	id     string
	name   string
	m      core.Message
	admin  bool
	// modes are the plugin's own modes there, as the runner announced.
	modes []core.Mode
	// rec, for a turn an earlier gateway left unfinished, is that turn:
	// Run follows it on.
	rec *turnRecord
}

func (p *remotePlugin) ID() string   { return p.id }
func (p *remotePlugin) Name() string { return p.name + " on " + p.runner }

// Modes are the plugin's own modes on the runner (core.ModeProvider),
// which /mode offers and the runner checks again.
func (p *remotePlugin) Modes() []core.Mode { return p.modes }

// Conversations lists the CLI's history on the runner.
func (p *remotePlugin) Conversations(ctx context.Context, workdir string) ([]core.ConversationInfo, error) {
	var rep listReply
	if err := p.g.request(ctx, runnerSubject(p.runner, "conversations"), listRequest{Plugin: p.id, Workdir: workdir, Admin: p.admin}, &rep); err != nil {
		return nil, fmt.Errorf("runner %s: %w", p.runner, err)
	}
	return rep.Conversations, rep.Error.err()
}

// Run runs the turn on the runner: the events come back in order;
// cancelling ctx stops it there, unless the bot is shutting down, when it
// goes on there for the next gateway to follow; a runner that goes silent
// or restarts ends it with an error saying so.
func (p *remotePlugin) Run(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	if p.rec != nil {
		if stopTools, err := p.serveTools(p.rec, t.Tools); err != nil {
			p.g.cfg.Logger.Warn("the followed turn's agent tools are not answered", "id", p.rec.ID, "err", err)
		} else {
			defer stopTools()
		}
		asked := p.askAgain(ctx, p.rec, t.Inbox, emit)
		msgs, stop, err := p.g.turnMessages(p.rec)
		if err != nil {
			p.stopTurn(p.rec)
			return core.TurnResult{}, fmt.Errorf("runner %s: %w", p.runner, err)
		}
		defer stop()
		return p.follow(ctx, p.rec, msgs, asked, t.Inbox, emit)
	}
	rec, msgs, stop, err := p.start(ctx, t)
	if err != nil {
		return core.TurnResult{}, err
	}
	defer stop()
	return p.follow(ctx, rec, msgs, nil, t.Inbox, emit)
}

// askAgain asks in the chat the questions of rec that wait for an answer
// on the runner: the gateway that asked them is gone. It returns their
// ids, which the stream may bring again. It opens inbox if the turn's
// takes messages there, before the chat hears that the turn goes on.
func (p *remotePlugin) askAgain(ctx context.Context, rec *turnRecord, inbox *core.Inbox, emit func(core.Event)) map[string]bool {
	var rep openReply
	err := p.g.request(ctx, turnSubject(p.runner, rec.ID, "questions"), struct{}{}, &rep)
	if err == nil && rep.Taking {
		inbox.Open(p.steer(rec))
	}
	emit(core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus,
		Text: "…continued: the bot restarted during this turn, which went on on " + p.runner}))
	if err != nil {
		p.g.cfg.Logger.Info("no open questions heard of", "runner", p.runner, "id", rec.ID, "err", err)
		return nil
	}
	asked := map[string]bool{}
	for i := range rep.Questions {
		q := &rep.Questions[i]
		asked[q.ID] = true
		emit(p.event(rec, &wireEvent{Kind: core.EventQuestion, Question: q}))
	}
	return asked
}

// start asks the runner for the turn, once it is recorded as followed,
// its messages are read and its agent tools are answered; stop ends
// those.
func (p *remotePlugin) start(ctx context.Context, t core.Turn) (rec *turnRecord, msgs *feed, stop func(), err error) {
	t.Prompt = p.g.cfg.Redactor.Redact(t.Prompt)
	info, _, _, _ := p.g.runnerNow(p.runner)
	rec = &turnRecord{ID: newID(), Runner: p.runner, Plugin: p.id, Name: p.name, Admin: p.admin, Instance: info.Instance,
		Key: t.Key, From: p.m.From, UserName: p.m.UserName, Allowed: p.m.Allowed, Text: t.Prompt}
	req := turnRequest{ID: rec.ID, Plugin: p.id, Admin: p.admin, Turn: t}
	stopTools, err := p.serveTools(rec, t.Tools)
	if err != nil {
		return nil, nil, nil, err
	}
	if t.Tools != nil && t.Tools.Actions != nil {
		req.Tools = t.Tools.Tools
	}
	msgs, rec.StreamSeq = p.g.events.open(rec.ID, p.runner)
	stop = func() {
		stopTools()
		p.g.events.forget(rec.ID)
	}
	if err := p.g.saveTurn(rec); err != nil {
		stop()
		return nil, nil, nil, err
	}
	rep, err := p.askStart(ctx, req)
	if err != nil {
		stop()
		p.stopTurn(rec) // in case it started after all
		return nil, nil, nil, fmt.Errorf("runner %s: %w", p.runner, err)
	}
	if err := rep.Error.err(); err != nil {
		stop()
		p.g.dropTurn(rec.ID)
		return nil, nil, nil, err
	}
	if rep.Instance != rec.Instance {
		rec.Instance = rep.Instance
		if err := p.g.saveTurn(rec); err != nil {
			p.g.cfg.Logger.Warn("turn record", "err", err)
		}
	}
	return rec, msgs, stop, nil
}

// startWait bounds how long a turn's start waits for the runner's answer
// while the runner is heard. Bounded by requestTimeout, turns failed that
// a busy runner would have started a few seconds later (1,000 asked at
// once on a loaded machine, issue 33); a runner that goes offline or
// restarts meanwhile ends the wait at once.
const startWait = 2 * time.Minute

// askStart asks the runner for the turn and waits for its answer, at most
// startWait and only while the runner is heard.
func (p *remotePlugin) askStart(ctx context.Context, req turnRequest) (turnReply, error) {
	_, _, online, gone := p.g.runnerNow(p.runner)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if online {
		go func() {
			select {
			case <-gone:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	var rep turnReply
	err := p.g.requestWithin(ctx, startWait, runnerSubject(p.runner, "turn"), req, &rep)
	select {
	case <-gone:
		if err != nil && online {
			err = &core.UserError{Err: err, Msg: fmt.Sprintf("runner %s went offline or restarted before the turn started", p.runner)}
		}
	default:
	}
	return rep, err
}

// stopTurn stops the turn on the runner and forgets it.
func (p *remotePlugin) stopTurn(rec *turnRecord) {
	p.g.tell(p.runner, rec.Instance, "cancel", cancelMessage{Turn: rec.ID})
	p.g.dropTurn(rec.ID)
}

// follow applies the turn's messages until its end. Questions in asked
// were asked already; inbox takes messages into the turn while the
// runner's does.
func (p *remotePlugin) follow(ctx context.Context, rec *turnRecord, msgs *feed, asked map[string]bool, inbox *core.Inbox, emit func(core.Event)) (core.TurnResult, error) {
	saver := newRecordSaver(p.g)
	gone, err := p.stillRunning(rec)
	done := ctx.Done()
	var giveUp <-chan time.Time
	for err == nil {
		select {
		case <-msgs.ready:
			batch, ended := msgs.take()
			applied := rec.Seq
			var end *turnMessage
			end, err = p.apply(rec, batch, asked, inbox, emit)
			if end != nil {
				saver.close(false)
				p.g.dropTurn(rec.ID)
				res := core.TurnResult{}
				if end.Result != nil {
					res = *end.Result
				}
				return res, end.Error.err()
			}
			if rec.Seq != applied {
				saver.note(rec)
			}
			if err == nil && ended {
				err = fmt.Errorf("runner %s: the turn's messages stopped coming", p.runner)
			}
		case <-done:
			if errors.Is(context.Cause(ctx), core.ErrShutdown) {
				// The next gateway follows on from the last message shown.
				saver.close(true)
				return core.TurnResult{}, &core.UserError{Err: core.ErrTurnGoesOn, Msg: fmt.Sprintf(
					"The bot is restarting; this turn goes on on %s, and its reply goes on here once the bot is back.", p.runner)}
			}
			// Stop it there, then wait for its end, which keeps the
			// session's partial turn.
			p.g.tell(p.runner, rec.Instance, "cancel", cancelMessage{Turn: rec.ID})
			done, giveUp = nil, time.After(stopGrace)
		case <-giveUp:
			saver.close(false)
			p.g.dropTurn(rec.ID)
			return core.TurnResult{}, context.Cause(ctx)
		case <-gone:
			gone, err = p.stillRunning(rec)
		}
	}
	saver.close(false)
	p.stopTurn(rec)
	return core.TurnResult{}, err
}

// apply shows a batch of turn messages: those applied before are
// skipped, a gap is an error. It moves rec on past what it showed, and
// returns the last message once the turn's end is applied.
func (p *remotePlugin) apply(rec *turnRecord, batch []feedPart, asked map[string]bool, inbox *core.Inbox, emit func(core.Event)) (*turnMessage, error) {
	tms, err := p.fresh(rec, batch)
	for _, tm := range tms {
		for i := range tm.Events {
			switch we := &tm.Events[i]; {
			case we.Inbox == inboxOpen:
				inbox.Open(p.steer(rec))
			case we.Inbox != "":
				inbox.Close()
			case we.Question == nil || !asked[we.Question.ID]:
				emit(p.event(rec, we))
			}
		}
	}
	if n := len(tms); n > 0 && tms[n-1].Done {
		return tms[n-1], nil
	}
	return nil, err
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

// fresh returns the parts of batch not applied yet, in order, up to the
// turn's end, and moves rec on to the last of them. It stops at a gap,
// with the error.
func (p *remotePlugin) fresh(rec *turnRecord, batch []feedPart) ([]*turnMessage, error) {
	var tms []*turnMessage
	for _, fp := range batch {
		tm := fp.tm
		switch {
		case tm.Seq <= rec.Seq:
			continue
		case tm.Seq != rec.Seq+1:
			return tms, fmt.Errorf("runner %s: turn message %d came where %d was due: events were lost", p.runner, tm.Seq, rec.Seq+1)
		}
		rec.Seq, rec.StreamSeq = tm.Seq, fp.streamSeq
		if tms = append(tms, tm); tm.Done {
			break
		}
	}
	return tms, nil
}

// stillRunning checks that the runner that accepted rec is still there:
// online, and the same instance. It returns the channel closed when that
// changes.
func (p *remotePlugin) stillRunning(rec *turnRecord) (<-chan struct{}, error) {
	info, seen, online, gone := p.g.runnerNow(p.runner)
	switch {
	case !online:
		return nil, core.Errorf("runner %s went offline during the turn (nothing heard from it for %s). "+
			"The conversation goes on there when it is back", p.runner, p.g.cfg.Clock.Now().Sub(seen).Round(time.Second))
	case info.Instance != "" && info.Instance != rec.Instance:
		return nil, core.Errorf("runner %s restarted during the turn, which ended there unfinished. "+
			"The conversation goes on in its session", p.runner)
	}
	return gone, nil
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

// steer is what takes a message into rec's turn: the runner gives it to
// the turn's inbox there and says whether it took it. A message not taken
// (the turn ending, the runner out of reach) waits in the chat: it is not
// sent again.
func (p *remotePlugin) steer(rec *turnRecord) func(core.Steering) error {
	return func(s core.Steering) error {
		msg := steerMessage{Turn: rec.ID, From: s.From, Prompt: p.g.cfg.Redactor.Redact(s.Prompt), Images: s.Images}
		var rep steerReply
		if err := p.g.request(p.g.ctx, runnerSubject(p.runner, "steer"), msg, &rep); err != nil {
			return fmt.Errorf("runner %s: %w (%w)", p.runner, core.ErrNotTaken, err)
		}
		if err := rep.Error.err(); err != nil {
			return fmt.Errorf("runner %s: %w", p.runner, err)
		}
		if !rep.Taken {
			return core.ErrNotTaken
		}
		return nil
	}
}

// event turns a wire event back into a core.Event; a question's answer
// goes back to the runner, without the gateway's secrets.
func (p *remotePlugin) event(rec *turnRecord, we *wireEvent) core.Event {
	ev := core.Event{Kind: we.Kind, Text: we.Text, SessionID: we.SessionID, Model: we.Model,
		Limit: we.Limit, Background: we.Background}
	if we.Block != nil {
		ev.Block = *we.Block
	}
	if q := we.Question; q != nil {
		ev.Question = &core.Question{Tool: q.Tool, Summary: q.Summary, Detail: q.Detail, Options: q.Options,
			Answer: func(a core.Answer) {
				red := p.g.cfg.Redactor
				a.Reason, a.Choice = red.Redact(a.Reason), red.Redact(a.Choice)
				p.g.tell(p.runner, rec.Instance, "answer", answerMessage{Turn: rec.ID, Question: q.ID, Answer: a})
			}}
	}
	return ev
}

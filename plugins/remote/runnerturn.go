package remote

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
)

// turn accepts a turn and runs it: its messages go out numbered, into the
// event stream under the turn's subject; a cancel or an answer comes to
// the runner's own subjects, naming the turn.
func (r *Runner) turn(ctx context.Context, m *nats.Msg) {
	var req turnRequest
	if err := json.Unmarshal(m.Data, &req); err != nil || !validName(req.ID) {
		r.respond(m, turnReply{Error: &wireError{Message: "malformed turn request"}})
		return
	}
	p, t, err := r.check(req)
	if err != nil {
		r.logger.Warn("turn refused", "id", req.ID, "plugin", req.Plugin, "workdir", req.Turn.Workdir, "admin", req.Admin, "err", err)
		r.respond(m, turnReply{Error: r.wireError(err)})
		return
	}
	turnCtx, cancel := context.WithCancelCause(ctx)
	t.Inbox = &core.Inbox{}
	rt := &runnerTurn{r: r, id: req.ID, plugin: p.ID(), workdir: t.Workdir, admin: req.Admin, author: t.Author, inbox: t.Inbox,
		cancel: cancel, ended: make(chan struct{}), questions: map[string]openQuestion{}}
	if !r.register(rt) {
		cancel(nil)
		r.respond(m, turnReply{Error: &wireError{Message: "the turn was cancelled before it started", User: true}})
		return
	}
	sub, err := rt.subscribe()
	if err != nil {
		cancel(nil)
		r.release(rt)
		r.respond(m, turnReply{Error: toWire(err)})
		return
	}
	rt.out = newOutbox(r.sender, req.ID)
	t.Inbox.Watch(rt.inboxChanged)
	r.respond(m, turnReply{Instance: r.instance})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(rt.ended)
		defer cancel(nil)
		defer sub.Unsubscribe()
		defer r.release(rt)
		r.claim(rt, t.SessionID)
		r.logger.Info("turn", "id", req.ID, "plugin", p.ID(), "workdir", t.Workdir, "admin", req.Admin)
		var closeTools func()
		t.Tools, closeTools = r.openTools(rt, req.Tools)
		res, err := p.Run(turnCtx, t, rt.emit)
		closeTools()
		t.Inbox.Close()
		rt.out.finish(res, r.wireError(err))
		<-rt.out.done
	}()
}

// runnerTurn is a turn running here: its outbox and its open questions.
type runnerTurn struct {
	r       *Runner
	id      string
	plugin  string
	workdir string
	admin   bool
	// author is the turn's (core.Turn.Author): only a message of theirs
	// is steered into it.
	author string
	// inbox takes the messages the gateway adds to the turn (steer).
	inbox  *core.Inbox
	cancel context.CancelCauseFunc
	ended  chan struct{}
	out    *outbox

	mu        sync.Mutex
	asked     int
	questions map[string]openQuestion
	sessions  []string
}

// openQuestion is a question of the turn not answered yet: as it went
// out, and where its answer goes.
type openQuestion struct {
	n      int
	wire   wireQuestion
	answer func(core.Answer)
}

// subscribe listens on the turn's own subject, where a gateway that
// follows the turn again asks which questions are open.
func (t *runnerTurn) subscribe() (*nats.Subscription, error) {
	sub, err := t.r.nc.Subscribe(turnSubject(t.r.cfg.Name, t.id, "questions"), t.open)
	if err != nil {
		return nil, err
	}
	if err := t.r.nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	return sub, nil
}

// claim makes rt the turn of a session it resumes or starts: a turn
// still running in it (whose gateway gave up on it while the runner was
// out of reach) is stopped first, so that two CLIs never write one
// session at once.
func (r *Runner) claim(rt *runnerTurn, token string) {
	if token == "" {
		return
	}
	key := rt.plugin + "/" + token
	r.mu.Lock()
	old := r.sessions[key]
	if old == rt {
		r.mu.Unlock()
		return
	}
	r.sessions[key] = rt
	r.mu.Unlock()
	rt.mu.Lock()
	rt.sessions = append(rt.sessions, key)
	rt.mu.Unlock()
	if old != nil {
		r.logger.Warn("stopping the older turn of a session", "id", old.id, "for", rt.id)
		old.cancel(errSuperseded)
		select {
		case <-old.ended:
		case <-time.After(stopGrace):
			r.logger.Error("the older turn of the session did not stop", "id", old.id)
		}
	}
}

// release forgets rt, and its sessions unless a newer turn took them.
func (r *Runner) release(rt *runnerTurn) {
	rt.mu.Lock()
	keys := rt.sessions
	rt.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.turns, rt.id)
	for _, k := range keys {
		if r.sessions[k] == rt {
			delete(r.sessions, k)
		}
	}
}

func (t *runnerTurn) emit(ev core.Event) {
	we := wireEvent{Kind: ev.Kind, Text: ev.Text, SessionID: ev.SessionID, Model: ev.Model, Limit: ev.Limit}
	if ev.Block != (core.ResponseBlock{}) {
		b := ev.Block
		we.Block = &b
	}
	if b := ev.Background; b != nil {
		we.Background = &core.Background{Tasks: slices.Clone(b.Tasks), Answered: b.Answered}
	}
	if q := ev.Question; q != nil {
		we.Question = &wireQuestion{Tool: q.Tool, Summary: q.Summary, Detail: q.Detail, Options: q.Options}
	}
	t.r.redact(&we)
	if q := ev.Question; q != nil {
		t.mu.Lock()
		t.asked++
		n := t.asked
		t.mu.Unlock()
		we.Question.ID = "q" + strconv.Itoa(n)
		if room := t.out.s.room() - partRoom; eventSize(we) > room {
			if we = t.out.fit(we, room)[0]; we.Question == nil {
				// Too large to ask even cut (its options): denied, so
				// that the agent is not left waiting for nobody.
				go q.Answer(core.Answer{Decision: core.Deny, Reason: "the question was too large to send to the chat", By: t.r.cfg.Name})
				t.out.add(we)
				return
			}
		}
		t.mu.Lock()
		t.questions[we.Question.ID] = openQuestion{n: n, wire: *we.Question, answer: q.Answer}
		t.mu.Unlock()
	}
	if ev.Kind == core.EventSession && ev.SessionID != "" {
		t.r.claim(t, ev.SessionID)
	}
	t.out.add(we)
}

// inboxChanged tells the gateway that the turn's inbox opened or closed,
// in order with its events.
func (t *runnerTurn) inboxChanged(taking bool) {
	state := inboxClosed
	if taking {
		state = inboxOpen
	}
	t.out.add(wireEvent{Inbox: state})
}

// steerTurn gives a message to the running turn it names, and answers
// whether the turn took it. Its images are kept only if uploaded into
// the turn's workdir here, as a turn's own.
func (r *Runner) steerTurn(m *nats.Msg) {
	var s steerMessage
	if err := json.Unmarshal(m.Data, &s); err != nil {
		r.respond(m, steerReply{Error: &wireError{Message: "malformed steer request"}})
		return
	}
	r.mu.Lock()
	t := r.turns[s.Turn]
	r.mu.Unlock()
	if t == nil {
		r.respond(m, steerReply{}) // ended: the message waits in the chat
		return
	}
	if s.From == "" || s.From != t.author {
		// The gateway checks who may steer (core's Router.permitsOf); the
		// runner holds its own turn to the same author whatever it says.
		r.logger.Warn("message refused: not the turn's author", "id", t.id, "from", s.From)
		r.respond(m, steerReply{Error: &wireError{Message: "only a message of the turn's own author is added to a turn on a runner", User: true}})
		return
	}
	err := t.inbox.Send(core.Steering{From: s.From, Prompt: s.Prompt, Images: r.uploadedImages(t.workdir, s.Images)})
	switch {
	case errors.Is(err, core.ErrNotTaken):
		r.respond(m, steerReply{})
	case err != nil:
		r.respond(m, steerReply{Error: r.wireError(err)})
	default:
		r.logger.Info("message added to the turn", "id", t.id)
		r.respond(m, steerReply{Taken: true})
	}
}

// redact blanks the runner's secrets out of an event.
func (r *Runner) redact(we *wireEvent) {
	red := r.cfg.Redactor
	we.Text, we.Model = red.Redact(we.Text), red.Redact(we.Model)
	if b := we.Block; b != nil {
		b.Text, b.Detail, b.Path = red.Redact(b.Text), red.Redact(b.Detail), red.Redact(b.Path)
	}
	if b := we.Background; b != nil {
		for i := range b.Tasks {
			b.Tasks[i] = red.Redact(b.Tasks[i])
		}
	}
	if q := we.Question; q != nil {
		q.Summary, q.Detail = red.Redact(q.Summary), red.Redact(q.Detail)
		for i := range q.Options {
			q.Options[i] = red.Redact(q.Options[i])
		}
	}
}

// cancelTurn stops the turn a cancel names, and acknowledges it. A cancel
// for a turn not started yet (its request is on its way, or was given up
// on) is kept for a while: the turn is refused when it comes.
func (r *Runner) cancelTurn(m *nats.Msg) {
	var c cancelMessage
	if json.Unmarshal(m.Data, &c) != nil || !validName(c.Turn) {
		return // no acknowledgement: not a message of ours
	}
	r.mu.Lock()
	t, ok := r.turns[c.Turn]
	if !ok {
		r.pruneCancelled()
		if len(r.cancelled) < maxEarlyCancels {
			r.cancelled[c.Turn] = time.Now()
		}
	}
	r.mu.Unlock()
	if ok {
		t.cancel(core.ErrStopped)
	}
	r.respond(m, struct{}{})
}

// earlyCancelKept is how long a cancel for a turn not started yet is
// kept: longer than a gateway waits for a turn's start. At most
// maxEarlyCancels are kept (a flood of forged ones costs nothing more).
const (
	earlyCancelKept = 2 * startWait
	maxEarlyCancels = 1024
)

// register makes rt a running turn, unless a cancel for it came first.
func (r *Runner) register(rt *runnerTurn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pruneCancelled()
	if _, early := r.cancelled[rt.id]; early {
		return false
	}
	r.turns[rt.id] = rt
	return true
}

// pruneCancelled forgets the early cancels older than earlyCancelKept.
// Call it with r.mu held.
func (r *Runner) pruneCancelled() {
	for id, at := range r.cancelled {
		if time.Since(at) > earlyCancelKept {
			delete(r.cancelled, id)
		}
	}
}

// answerTurn answers a question of the turn the answer names, once, and
// acknowledges it.
func (r *Runner) answerTurn(m *nats.Msg) {
	var a answerMessage
	if json.Unmarshal(m.Data, &a) != nil {
		return
	}
	r.mu.Lock()
	t := r.turns[a.Turn]
	r.mu.Unlock()
	if t != nil {
		t.mu.Lock()
		q, ok := t.questions[a.Question]
		delete(t.questions, a.Question)
		t.mu.Unlock()
		if ok {
			q.answer(a.Answer)
		}
	}
	r.respond(m, struct{}{})
}

// open answers which questions wait for an answer, in the order asked.
func (t *runnerTurn) open(m *nats.Msg) {
	t.mu.Lock()
	open := make([]openQuestion, 0, len(t.questions))
	for _, q := range t.questions {
		open = append(open, q)
	}
	t.mu.Unlock()
	slices.SortFunc(open, func(a, b openQuestion) int { return a.n - b.n })
	rep := openReply{Taking: t.inbox.Taking()}
	for _, q := range open {
		rep.Questions = append(rep.Questions, q.wire)
	}
	t.r.respond(m, rep)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

package remote

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
)

// turn accepts a turn and runs it: its messages go out numbered, into the
// event stream under the turn's subject; a cancel or an answer comes back
// on the turn's own subjects.
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
	rt := &runnerTurn{r: r, id: req.ID, plugin: p.ID(), cancel: cancel, ended: make(chan struct{}),
		questions: map[string]openQuestion{}}
	subs, err := rt.subscribe()
	if err != nil {
		cancel(nil)
		r.respond(m, turnReply{Error: toWire(err)})
		return
	}
	rt.out = newOutbox(r, req.ID, ctx.Done())
	r.respond(m, turnReply{Instance: r.instance})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(rt.ended)
		defer cancel(nil)
		defer unsubscribe(subs)
		defer r.release(rt)
		r.claim(rt, t.ResumeToken)
		r.logger.Info("turn", "id", req.ID, "plugin", p.ID(), "workdir", t.Workdir, "admin", req.Admin)
		res, err := p.Run(turnCtx, t, rt.emit)
		rt.out.finish(res, r.wireError(err))
		<-rt.out.done
	}()
}

// runnerTurn is a turn running here: its outbox and its open questions.
type runnerTurn struct {
	r      *Runner
	id     string
	plugin string
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

// subscribe listens on the turn's own subjects: a cancel, an answer, and
// a gateway that follows the turn again asking which questions are open.
func (t *runnerTurn) subscribe() ([]*nats.Subscription, error) {
	var subs []*nats.Subscription
	for what, h := range map[string]nats.MsgHandler{
		"cancel":    func(*nats.Msg) { t.cancel(core.ErrStopped) },
		"answer":    t.answer,
		"questions": t.open,
	} {
		sub, err := t.r.nc.Subscribe(turnSubject(t.r.cfg.Name, t.id, what), h)
		if err != nil {
			unsubscribe(subs)
			return nil, err
		}
		subs = append(subs, sub)
	}
	if err := t.r.nc.Flush(); err != nil {
		unsubscribe(subs)
		return nil, err
	}
	return subs, nil
}

func unsubscribe(subs []*nats.Subscription) {
	for _, s := range subs {
		s.Unsubscribe()
	}
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

// release forgets rt's sessions, unless a newer turn took them.
func (r *Runner) release(rt *runnerTurn) {
	rt.mu.Lock()
	keys := rt.sessions
	rt.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		if r.sessions[k] == rt {
			delete(r.sessions, k)
		}
	}
}

func (t *runnerTurn) emit(ev core.Event) {
	we := wireEvent{Kind: ev.Kind, Text: ev.Text, Block: ev.Block, ResumeToken: ev.ResumeToken, Model: ev.Model}
	if q := ev.Question; q != nil {
		we.Question = &wireQuestion{Tool: q.Tool, Summary: q.Summary, Detail: q.Detail, Options: q.Options}
	}
	t.r.redact(&we)
	if q := ev.Question; q != nil {
		t.mu.Lock()
		t.asked++
		we.Question.ID = "q" + strconv.Itoa(t.asked)
		t.questions[we.Question.ID] = openQuestion{n: t.asked, wire: *we.Question, answer: q.Answer}
		t.mu.Unlock()
	}
	if ev.Kind == core.EventSession && ev.ResumeToken != "" {
		t.r.claim(t, ev.ResumeToken)
	}
	t.out.add(we)
}

// redact blanks the runner's secrets out of an event.
func (r *Runner) redact(we *wireEvent) {
	red := r.cfg.Redactor
	we.Text, we.Model = red.Redact(we.Text), red.Redact(we.Model)
	we.Block.Text, we.Block.Detail, we.Block.Path = red.Redact(we.Block.Text), red.Redact(we.Block.Detail), red.Redact(we.Block.Path)
	if q := we.Question; q != nil {
		q.Summary, q.Detail = red.Redact(q.Summary), red.Redact(q.Detail)
		for i := range q.Options {
			q.Options[i] = red.Redact(q.Options[i])
		}
	}
}

func (t *runnerTurn) answer(m *nats.Msg) {
	var a answerMessage
	if json.Unmarshal(m.Data, &a) != nil {
		return
	}
	t.mu.Lock()
	q, ok := t.questions[a.Question]
	delete(t.questions, a.Question)
	t.mu.Unlock()
	if ok {
		q.answer(a.Answer)
	}
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
	var rep openReply
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

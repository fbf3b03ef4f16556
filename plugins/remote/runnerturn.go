package remote

import (
	"context"
	"encoding/json"
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
		questions: map[string]func(core.Answer){}}
	cancelSub, err1 := r.nc.Subscribe(turnSubject(r.cfg.Name, req.ID, "cancel"), func(*nats.Msg) { cancel(core.ErrStopped) })
	answerSub, err2 := r.nc.Subscribe(turnSubject(r.cfg.Name, req.ID, "answer"), rt.answer)
	if err := firstErr(err1, err2, r.nc.Flush()); err != nil {
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
		defer cancelSub.Unsubscribe()
		defer answerSub.Unsubscribe()
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
	questions map[string]func(core.Answer)
	sessions  []string
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
		t.mu.Lock()
		id := "q" + strconv.Itoa(len(t.questions)+1)
		t.questions[id] = q.Answer
		t.mu.Unlock()
		we.Question = &wireQuestion{ID: id, Tool: q.Tool, Summary: q.Summary, Detail: q.Detail, Options: q.Options}
	}
	if ev.Kind == core.EventSession && ev.ResumeToken != "" {
		t.r.claim(t, ev.ResumeToken)
	}
	t.out.add(we)
}

func (t *runnerTurn) answer(m *nats.Msg) {
	var a answerMessage
	if json.Unmarshal(m.Data, &a) != nil {
		return
	}
	t.mu.Lock()
	f := t.questions[a.Question]
	delete(t.questions, a.Question)
	t.mu.Unlock()
	if f != nil {
		f(a.Answer)
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

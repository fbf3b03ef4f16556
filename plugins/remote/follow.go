package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// stopGrace is how long a stopped turn may take to end on the runner
// (the CLI's own interrupt, then its kill) before the gateway gives up.
const stopGrace = 20 * time.Second

// remotePlugin is a plugin of a runner, as the router sees it for one
// user.
type remotePlugin struct {
	g      *Gateway
	runner string
	id     string
	name   string
	m      core.Message
	admin  bool
	// modes are the plugin's own modes there, as the runner announced,
	// and readOnly its means to run a read-only turn (empty: none).
	modes    []core.Mode
	readOnly string
	// rec, for a turn an earlier gateway left unfinished, is that turn:
	// Run follows it on.
	rec *turnRecord
}

var _ core.ReadOnlyPlugin = (*remotePlugin)(nil)

func (p *remotePlugin) ID() string   { return p.id }
func (p *remotePlugin) Name() string { return p.name + " on " + p.runner }

// Modes are the plugin's own modes on the runner (core.ModeProvider),
// which /mode offers and the runner checks again.
func (p *remotePlugin) Modes() []core.Mode { return p.modes }

// ReadOnlyMeans is the plugin's means to run a read-only turn on the
// runner, as the runner announced it (core.ReadOnlyPlugin); a runner of
// before announces none.
func (p *remotePlugin) ReadOnlyMeans() (string, bool) {
	if p.readOnly == "" {
		return "", false
	}
	return p.readOnly + " on " + p.runner, true
}

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
	if t.ReadOnly && p.readOnly == "" && p.rec == nil {
		// A runner of before would run it with the right to write.
		return core.TurnResult{}, core.ErrNoReadOnly
	}
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
		Key: t.Key, From: p.m.From, UserName: p.m.UserName, Allowed: p.m.Allowed, Text: t.Prompt, Side: t.Side,
		Unconfirmed: true, ByPerson: p.m.Origin().Kind == core.OriginPerson && t.Side == nil}
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
	if err != nil && (errors.Is(context.Cause(ctx), core.ErrShutdown) || p.g.nc.IsClosed()) {
		// The bot is stopping, or this gateway stepped down, with the
		// request on its way: the runner may have taken the turn. Its
		// record stays, unconfirmed, for the next gateway, which asks
		// the runner and follows the turn or tells its chat it was lost.
		stop()
		return nil, nil, nil, p.goesOn()
	}
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
	// The record saved next (the first messages shown) says the turn
	// started; a gateway that dies before only makes the next ask again.
	rec.Unconfirmed = false
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
				if p.g.nc.IsClosed() {
					// This gateway's own connection closed, not the
					// turn: it stepped down (its lease lost), and the
					// next gateway follows on.
					saver.close(true)
					return core.TurnResult{}, p.goesOn()
				}
				err = fmt.Errorf("runner %s: the turn's messages stopped coming", p.runner)
			}
		case <-done:
			if errors.Is(context.Cause(ctx), core.ErrShutdown) {
				// The next gateway follows on from the last message shown.
				saver.close(true)
				return core.TurnResult{}, p.goesOn()
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

// goesOn is the error of a turn this gateway leaves running on its
// runner, for the next gateway to follow.
func (p *remotePlugin) goesOn() error {
	return &core.UserError{Err: core.ErrTurnGoesOn, Msg: fmt.Sprintf(
		"The bot is restarting; this turn goes on on %s, and its reply goes on here once the bot is back.", p.runner)}
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

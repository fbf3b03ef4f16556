package remote

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A turn is recorded before its runner is asked for it, and its record
// says so (Unconfirmed) until the runner's answer comes. A gateway that
// stops waiting for that answer (shut down, stepped down, killed) leaves
// a turn the runner may have taken, or refused, or not heard of yet; the
// next gateway asks before it follows it (confirmStarts). Following a
// turn that never started would wait for messages that never come, and
// stopping one that did would lose its reply.

// confirmStarts settles each unconfirmed turn left unfinished: whether
// its runner took it. One that never started is dropped, and handed over
// as such (core.UnfinishedTurn.NotStarted): its chat is told.
func (g *Gateway) confirmStarts(ctx context.Context) {
	var wg sync.WaitGroup
	for _, rec := range g.unfinished {
		if !rec.Unconfirmed {
			continue
		}
		wg.Go(func() {
			if g.startedThere(ctx, rec) {
				rec.Unconfirmed = false // its next save says so
				return
			}
			g.cfg.Logger.Warn("an unfinished turn never started on its runner", "runner", rec.Runner, "id", rec.ID)
			rec.notStarted = true
			g.dropTurn(rec.ID)
		})
	}
	wg.Wait()
}

// startedThere reports whether rec's runner took it. A turn running there
// answers on its own subject (.questions) from before the runner answers
// its start until after its end is in the stream. When nothing answers,
// the runner is told to cancel it, which also refuses it should its
// request come late (an early cancel); then the turn started only if the
// stream holds a part of it, which ended it or stopped it. A request that
// fails otherwise (no answer in time) counts as started: the turn is
// followed as any other, which ends once its runner is offline.
func (g *Gateway) startedThere(ctx context.Context, rec *turnRecord) bool {
	var rep openReply
	err := g.request(ctx, turnSubject(rec.Runner, rec.ID, "questions"), struct{}{}, &rep)
	if !errors.Is(err, nats.ErrNoResponders) {
		return true
	}
	cancelled := g.requestWithin(ctx, tellAttempt, runnerSubject(rec.Runner, "cancel"), cancelMessage{Turn: rec.ID}, &struct{}{})
	if cancelled != nil {
		g.tell(rec.Runner, rec.Instance, "cancel", cancelMessage{Turn: rec.ID})
	}
	found, err := g.inStream(ctx, rec)
	if err != nil {
		g.cfg.Logger.Warn("whether an unfinished turn started is not known; counted as not", "runner", rec.Runner, "id", rec.ID, "err", err)
	}
	return found
}

// inStream reports whether the event stream holds a part of rec after
// the place its record was saved at, up to the runner's last message
// now.
func (g *Gateway) inStream(ctx context.Context, rec *turnRecord) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	stream, err := g.js.Stream(ctx, eventStream)
	if err != nil {
		return false, err
	}
	last, err := stream.GetLastMsgForSubject(ctx, eventSubject(rec.Runner))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if last.Sequence <= rec.StreamSeq {
		return false, nil
	}
	cons, err := g.js.OrderedConsumer(ctx, eventStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{eventSubject(rec.Runner)},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: rec.StreamSeq + 1})
	if err != nil {
		return false, err
	}
	defer g.deleteConsumer(cons)
	it, err := cons.Messages()
	if err != nil {
		return false, err
	}
	defer it.Stop()
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return false, err
		}
		parts, seq := decodeBatch(m, g.cfg.Logger)
		if slices.ContainsFunc(parts, func(tm turnMessage) bool { return tm.Turn == rec.ID }) {
			return true, nil
		}
		if seq >= last.Sequence {
			return false, nil
		}
	}
}

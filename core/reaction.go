package core

import (
	"context"
	"log/slog"
	"sync"
)

// Reaction is the state of a user's message's turn, shown as an emoji
// reaction on the message (REACTIONS): a signal that needs no reading.
type Reaction int

const (
	ReactionNone Reaction = iota
	// ReactionRunning: its turn runs.
	ReactionRunning
	// ReactionWaiting: its turn waits for an answer to a question.
	ReactionWaiting
	// ReactionDone: its turn ended well.
	ReactionDone
	// ReactionFailed: its turn ended with an error.
	ReactionFailed
	// ReactionStopped: its turn was stopped (/stop, a timeout).
	ReactionStopped
	// ReactionLimit: a usage window refused it; it goes on at the reset.
	ReactionLimit
)

// final reports whether nothing follows it.
func (r Reaction) final() bool { return r >= ReactionDone }

// Reacter is implemented by platforms that can put an emoji reaction on a
// user's message, each with emoji it accepts for each state. React shows
// state on m (its ID and place), in place of the bot's previous reaction
// there: one at a time. A *RateLimitError makes the router try the
// latest state again once it has passed; the reply never waits for it.
type Reacter interface {
	React(ctx context.Context, m Message, state Reaction) error
}

// reactions shows each message's latest state, one call at a time per
// message, so that a slow or rate-limited platform skips the states that
// passed meanwhile and loses none of the last.
type reactions struct {
	// on is REACTIONS; stopping ends when the bot stops (its reactions
	// are then given up), deliver outlives it, for the calls.
	on                bool
	stopping, deliver context.Context
	clock             Clock
	logger            *slog.Logger

	mu    sync.Mutex
	marks map[string]*mark
}

// mark is one message's reaction: want is the state to show, shown the
// one shown; busy while a call (or a wait after a 429) is under way.
type mark struct {
	want, shown Reaction
	busy        bool
}

// react shows state on m's message where the platform can and REACTIONS
// is on. It returns at once.
func (rs *reactions) react(a *attached, m Message, state Reaction) {
	p, ok := a.p.(Reacter)
	if !ok || !rs.on || m.ID == "" || m.Unattended() {
		return
	}
	key := m.Key.Platform + "/" + m.Key.Channel + "/" + m.ID
	rs.mu.Lock()
	if rs.marks == nil {
		rs.marks = map[string]*mark{}
	}
	mk := rs.marks[key]
	if mk == nil {
		mk = &mark{}
		rs.marks[key] = mk
	}
	mk.want = state
	start := !mk.busy
	mk.busy = true
	rs.mu.Unlock()
	if start {
		go rs.showReaction(p, m, key, mk)
	}
}

// showReaction makes the platform show mk.want until it does, waiting
// out a 429 on the clock; other errors give the message up.
func (rs *reactions) showReaction(p Reacter, m Message, key string, mk *mark) {
	for {
		rs.mu.Lock()
		state := mk.want
		if state == mk.shown || rs.stopping.Err() != nil {
			mk.busy = false
			if state.final() || rs.stopping.Err() != nil {
				delete(rs.marks, key)
			}
			rs.mu.Unlock()
			return
		}
		rs.mu.Unlock()
		err := p.React(rs.deliver, m, state)
		if rl, limited := AsRateLimit(err); limited {
			rs.logger.Debug("reaction rate limited: the latest state is shown after the wait", "conversation", m.Key.String(), "retry_after", rl.RetryAfter)
			rs.clock.AfterFunc(rl.RetryAfter, func() { rs.showReaction(p, m, key, mk) })
			return
		}
		rs.mu.Lock()
		if err != nil {
			rs.logger.Warn("reaction", "conversation", m.Key.String(), "err", err)
			mk.busy = false
			delete(rs.marks, key)
			rs.mu.Unlock()
			return
		}
		mk.shown = state
		rs.mu.Unlock()
	}
}

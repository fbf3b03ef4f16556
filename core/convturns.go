package core

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// conversationTurns is each conversation's running turn and the messages
// waiting behind it. It is safe for concurrent use; each method is one
// whole critical section, and none blocks: replies, platform and plugin
// calls are its callers', after it returns. It keeps these invariants:
//
//   - a conversation has at most one runningTurn, and one goroutine (the
//     caller that placed its first message, runQueued) runs its turns;
//   - a message placed in a conversation (placeStarted, placeQueued) is
//     at any time exactly one of: running, waiting in its runningTurn (at
//     most limit wait), or handed back once to a caller who then owns it
//     (next, to run or drop; stop; windDown; takeWaiting). None is lost
//     between a turn's end and the next: next takes the next message, or
//     removes the runningTurn with what waited, in one step;
//   - once windingDown, no runningTurn is created, nothing more waits, and
//     a runningTurn ends after its running turn.
//
// Lock order: mu before an Inbox's own lock (Taking).
type conversationTurns struct {
	limit int // how many messages may wait behind a running turn

	mu          sync.Mutex
	byKey       map[ConversationKey]*runningTurn
	windingDown bool
	// running counts the goroutines running a conversation's turns; it is
	// added to in the step that creates a runningTurn, so that windDown's
	// caller waits for every one created before it.
	running sync.WaitGroup
}

// runningTurn exists only while a conversation has a turn running or
// messages waiting for it. key, a and target are fixed; the other fields
// are its conversationTurns' (mu).
type runningTurn struct {
	key     ConversationKey
	a       *attached
	target  Target
	pending []queued
	cancel  context.CancelCauseFunc
	// inbox takes messages into the running turn; conv and workdir are
	// where it runs, for the files sent with them.
	inbox   *Inbox
	conv    Conversation
	workdir string
	// running is the running turn's message, whose author and permits
	// decide who may steer into it (permits.steerInto); nil before it
	// begins.
	running *queued
	// plugin and session id of the running turn, for /status and the shutdown
	// notice.
	plugin    string
	sessionID string
	// background is the running turn's background work.
	background []string
	// held are the Done of messages answered in the running turn
	// (answers to its questions, messages steered into it), called once
	// the turn is delivered.
	held []func()
}

func newConversationTurns(limit int) *conversationTurns {
	return &conversationTurns{limit: limit, byKey: make(map[ConversationKey]*runningTurn)}
}

// placement is what place did with a message.
type placement int

const (
	// placeRefused: the bot is winding down; nothing was done.
	placeRefused placement = iota
	// placeSteer: a turn runs and the caller asked to steer into it (q);
	// the message was not queued.
	placeSteer
	// placeFull: limit messages wait already; the message was not queued.
	placeFull
	// placeQueued: the message waits behind q's turn.
	placeQueued
	// placeStarted: q is new; the caller runs the message in it, then
	// every message next gives, then calls exited.
	placeStarted
)

// placed is place's result: q is the conversation's runningTurn; waiting
// how many messages wait in it, and steerable whether its running turn
// takes messages now; running is that turn's message.
type placed struct {
	how       placement
	q         *runningTurn
	waiting   int
	steerable bool
	running   *queued
}

// place starts m's turn if its conversation has none running, else queues
// m behind it; with steer, it queues nothing and returns the running
// turn for the caller to steer into.
func (c *conversationTurns) place(a *attached, m queued, steer bool) placed {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.windingDown {
		return placed{how: placeRefused}
	}
	key := m.m.Key
	q, running := c.byKey[key]
	switch {
	case running && steer:
		return placed{how: placeSteer, q: q, running: q.running}
	case running && len(q.pending) >= c.limit:
		return placed{how: placeFull, q: q, waiting: len(q.pending)}
	case running:
		q.pending = append(q.pending, m)
		return placed{how: placeQueued, q: q, waiting: len(q.pending), steerable: q.inbox.Taking(), running: q.running}
	}
	q = &runningTurn{key: key, a: a, target: m.m.Target(), plugin: m.conv.Plugin}
	c.byKey[key] = q
	c.running.Add(1)
	return placed{how: placeStarted, q: q}
}

// turnEnd is what follows a turn of q: the next message to run in it
// (more), or, q being removed, the messages that waited and are dropped
// (the bot stops), and whether the conversation is idle (not stopping).
// held are the Done of messages answered in the turn.
type turnEnd struct {
	next    queued
	more    bool
	held    []func()
	dropped []queued
	idle    bool
}

// next ends q's running turn: it takes the next waiting message or, when
// none waits or the bot stops (stopping, or winding down), removes q.
func (c *conversationTurns) next(q *runningTurn, stopping bool) turnEnd {
	c.mu.Lock()
	defer c.mu.Unlock()
	end := turnEnd{held: q.held}
	q.held = nil
	if len(q.pending) == 0 || stopping || c.windingDown {
		end.dropped, q.pending = q.pending, nil
		delete(c.byKey, q.key)
		end.idle = !stopping && !c.windingDown
		return end
	}
	end.next, end.more = q.pending[0], true
	q.pending, q.running = q.pending[1:], nil
	return end
}

// exited is called by the goroutine that ran a conversation's turns once
// it is done with them, their replies delivered.
func (c *conversationTurns) exited() { c.running.Done() }

// wait blocks until every goroutine running turns has exited.
func (c *conversationTurns) wait() { c.running.Wait() }

// began records that q's turn of m started: what cancels it, its plugin
// and session.
func (c *conversationTurns) began(q *runningTurn, m queued, cancel context.CancelCauseFunc, plugin, sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q.running, q.cancel, q.plugin, q.sessionID = &m, cancel, plugin, sessionID
}

// streaming records where q's turn runs and its inbox, once the turn has
// its message.
func (c *conversationTurns) streaming(q *runningTurn, inbox *Inbox, conv Conversation, workdir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q.inbox, q.conv, q.workdir = inbox, conv, workdir
}

// inboxOf returns q's running turn's inbox and where it runs.
func (c *conversationTurns) inboxOf(q *runningTurn) (*Inbox, Conversation, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return q.inbox, q.conv, q.workdir
}

// setSession records the session q's running turn is in.
func (c *conversationTurns) setSession(q *runningTurn, sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q.sessionID = sessionID
}

// setBackground records q's running turn's background work.
func (c *conversationTurns) setBackground(q *runningTurn, tasks []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q.background = tasks
}

// hold keeps done to be called once key's running turn is delivered, and
// reports whether it did: not when no turn runs, nor when in is not nil
// and no longer key's runningTurn.
func (c *conversationTurns) hold(key ConversationKey, in *runningTurn, done func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	q, ok := c.byKey[key]
	if !ok || (in != nil && q != in) {
		return false
	}
	q.held = append(q.held, done)
	return true
}

// Why a waiting message cannot be moved (sendNow, takeWaiting).
var (
	errNotWaiting = errors.New("the message no longer waits")
	errNotAuthor  = errors.New("not the message's author")
	errNotTaking  = errors.New("the running turn takes no message")
)

// sendNow moves message id, waiting in one of platform's conversations,
// to the front of its line and interrupts the running turn (ErrSentNow),
// so that it runs next. by moves it: its author, or an admin. It returns
// the message.
func (c *conversationTurns) sendNow(platform, id, by string, admin bool) (queued, error) {
	c.mu.Lock()
	q, i, err := c.waiting(platform, id, by, admin)
	if err != nil {
		c.mu.Unlock()
		return q.pendingAt(i), err
	}
	next := q.pending[i]
	q.pending = append(q.pending[:i:i], q.pending[i+1:]...)
	q.pending = append([]queued{next}, q.pending...)
	cancel := q.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel(ErrSentNow)
	}
	return next, nil
}

// takeWaiting takes message id, waiting in one of platform's
// conversations, out of line to be steered into the running turn, which
// it returns; by takes it: its author, or an admin. may says whether the
// message may join the running turn of the message running (nil before
// the turn begins); its error is returned as it is, the message left
// waiting. may must not block.
func (c *conversationTurns) takeWaiting(platform, id, by string, admin bool, may func(waiting, running *queued) error) (*runningTurn, queued, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q, i, err := c.waiting(platform, id, by, admin)
	if err != nil {
		return nil, q.pendingAt(i), err
	}
	next := q.pending[i]
	if !q.inbox.Taking() {
		return nil, next, errNotTaking
	}
	if err := may(&next, q.running); err != nil {
		return nil, next, err
	}
	q.pending = append(q.pending[:i:i], q.pending[i+1:]...)
	return q, next, nil
}

// waiting finds message id among the waiting messages of platform's
// conversations (an admin's press on an author's button may come from
// another conversation), checking that by may move it. mu is held.
func (c *conversationTurns) waiting(platform, id, by string, admin bool) (*runningTurn, int, error) {
	for k, q := range c.byKey {
		if k.Platform != platform {
			continue
		}
		i := slices.IndexFunc(q.pending, func(p queued) bool { return p.id == id })
		if i < 0 {
			continue
		}
		if q.pending[i].m.Author() != by && !admin {
			return q, i, errNotAuthor
		}
		return q, i, nil
	}
	return nil, -1, errNotWaiting
}

// pendingAt is the message waiting at i, or the zero queued.
func (q *runningTurn) pendingAt(i int) queued {
	if q == nil || i < 0 {
		return queued{}
	}
	return q.pending[i]
}

// stop drops what waits in k's conversation and interrupts its running
// turn (ErrStopped). It returns the dropped messages and whether a turn
// was running.
func (c *conversationTurns) stop(k ConversationKey) (dropped []queued, running bool) {
	c.mu.Lock()
	q, ok := c.byKey[k]
	if !ok {
		c.mu.Unlock()
		return nil, false
	}
	dropped, q.pending = q.pending, nil
	cancel := q.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel(ErrStopped)
	}
	return dropped, true
}

// turnState is a conversation's running turn for /status: its plugin,
// how many messages wait, its background work.
type turnState struct {
	plugin     string
	waiting    int
	background []string
}

// state returns k's running turn, if one runs.
func (c *conversationTurns) state(k ConversationKey) (turnState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q, ok := c.byKey[k]
	if !ok {
		return turnState{}, false
	}
	return turnState{plugin: q.plugin, waiting: len(q.pending), background: slices.Clone(q.background)}, true
}

// counts returns how many conversations run a turn and how many messages
// wait in them.
func (c *conversationTurns) counts() (running, waiting int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.byKey {
		waiting += len(q.pending)
	}
	return len(c.byKey), waiting
}

// idle reports whether k has no running turn and the bot is not winding
// down: whether a warm CLI made for k's next turn is still wanted.
func (c *conversationTurns) idle(k ConversationKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.windingDown && c.byKey[k] == nil
}

// windingTurn is a running turn as windDown found it, with the messages
// that waited in it, dropped.
type windingTurn struct {
	a         *attached
	target    Target
	plugin    string
	sessionID string
	dropped   []queued
}

// windDown stops every turn from starting from now on and takes every
// waiting message out of line; it returns the turns that run.
func (c *conversationTurns) windDown() []windingTurn {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.windingDown = true
	turns := make([]windingTurn, 0, len(c.byKey))
	for _, q := range c.byKey {
		turns = append(turns, windingTurn{a: q.a, target: q.target, plugin: q.plugin, sessionID: q.sessionID, dropped: q.pending})
		q.pending = nil
	}
	return turns
}

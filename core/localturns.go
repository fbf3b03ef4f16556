package core

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core/recent"
)

// LocalTurns keeps, outside this process, the messages it took for a
// turn of their own, from the moment it took them (before they wait for
// the conversation's turn or a turn slot) until their reply was delivered
// or their user told otherwise: such a message dies with the process,
// and the process that takes over from it (another gateway, on NATS)
// tells those conversations so. A turn on a runner is recorded too: the
// turn goes on there, and the next process follows it, but a message that
// had not reached its runner yet, or whose reply had ended there and was
// not delivered yet, is lost with the process. Its methods are called
// concurrently.
type LocalTurns interface {
	// Began records that t was taken; Ended that t's reply was delivered
	// or its user told why not.
	Began(t LocalTurn)
	Ended(t LocalTurn)
	// Lost hands over, once, the messages in platform's conversations
	// that a process of the bot that stopped without ending them left.
	Lost(platform string) []LocalTurn
}

// LocalTurn is a message taken by a process of the bot for its turn.
type LocalTurn struct {
	Key ConversationKey
	// ID is the message's correlation id: a conversation may have one
	// turn running and messages waiting behind it.
	ID string `json:",omitempty"`
	// MessageID is the platform's id of the message (Message.ID): a
	// platform that delivers the message again to the process that took
	// over (an update Telegram had not confirmed) has it known as taken.
	MessageID string `json:",omitempty"`
	From      string
	UserName  string
	// Text is the message the turn answers.
	Text string
	// ByPerson says a person wrote Text (not a schedule, nor an agent):
	// only then is running it again offered to whoever presses the button.
	ByPerson bool
	// Started is when the message was taken.
	Started time.Time
	// Gateway names the process it ran in, set by LocalTurns.
	Gateway string
}

// takenMessages records, through RouterConfig.LocalTurns, the messages
// this process took until their replies are delivered, and reads those an
// earlier process left.
type takenMessages struct {
	rec    LocalTurns // nil: nothing is recorded
	clock  Clock
	logger *slog.Logger
	// left are the messages an earlier process took and left (lost),
	// by conversation and platform id. This is where a message a platform
	// delivers again after a takeover is de-duplicated: the record that
	// reports it lost is the one thing both processes see, so whatever
	// the platform, a message taken there is not answered twice here;
	// its chat is told it was lost, and offered to run it again.
	left *recent.Map[leftMessage, struct{}]
}

type leftMessage struct {
	key ConversationKey
	id  string
}

func newTakenMessages(rec LocalTurns, clock Clock, logger *slog.Logger) takenMessages {
	return takenMessages{rec: rec, clock: clock, logger: logger, left: recent.New[leftMessage, struct{}](10_000)}
}

// takenBefore reports whether m is a message an earlier process took and
// left, which its platform delivers again.
func (tm takenMessages) takenBefore(m Message) bool {
	if m.ID == "" {
		return false
	}
	_, ok := tm.left.Get(leftMessage{m.Key, m.ID})
	return ok
}

// take records qm as taken here, unless it is the rest of a turn an
// earlier process left on a runner (which the turn's record there
// covers), and returns what records its end; it may be called more than
// once.
func (tm takenMessages) take(qm queued) (ended func()) {
	if tm.rec == nil || qm.follow != nil {
		return func() {}
	}
	m := qm.m
	t := LocalTurn{Key: m.Key, ID: qm.id, MessageID: m.ID, From: m.From, UserName: m.UserName, Text: m.Text, ByPerson: m.origin == OriginPerson, Started: tm.clock.Now()}
	tm.rec.Began(t)
	var once sync.Once
	return func() { once.Do(func() { tm.rec.Ended(t) }) }
}

// lostNotice is what to tell a conversation of a message lost with the
// process that took it.
type lostNotice struct {
	to  Target
	ans answer
}

// lost returns what to tell platform's conversations whose messages a
// process of the bot took and stopped without answering: that they were
// lost, with an offer to run a person's message again. A conversation in
// followed has its turn followed on its runner, or was told that turn
// never started there: its first message left is that turn's. Called before the platform runs, it also learns which of
// its messages were taken (takenBefore).
func (tm takenMessages) lost(platform string, followed map[ConversationKey]bool) []lostNotice {
	if tm.rec == nil {
		return nil
	}
	lost := tm.rec.Lost(platform)
	slices.SortStableFunc(lost, func(x, y LocalTurn) int { return x.Started.Compare(y.Started) })
	var notices []lostNotice
	for _, t := range lost {
		if t.MessageID != "" {
			tm.left.Add(leftMessage{t.Key, t.MessageID}, struct{}{})
		}
		if followed[t.Key] {
			delete(followed, t.Key)
			continue
		}
		text := fmt.Sprintf("⚠️ A turn was lost: gateway %s was answering %s's message when it stopped (it took it at %s), and the message was lost with it. The message was: %s",
			cmp.Or(t.Gateway, "(unknown)"), cmp.Or(t.UserName, t.From), t.Started.UTC().Format("15:04:05 UTC"), Shorten(t.Text, 300))
		tm.logger.Warn("turn lost with the gateway it ran in", "conversation", t.Key.String(), "gateway", t.Gateway)
		notices = append(notices, lostNoticeOf(t.Key, text, t.Text, t.ByPerson))
	}
	return notices
}

// notStartedNotice is what to tell the conversation of u, a turn on a
// runner that never started there: the process that asked for it
// stopped before the runner's answer came (Runners.Unfinished).
func notStartedNotice(u UnfinishedTurn) lostNotice {
	m := u.Message
	text := fmt.Sprintf("⚠️ A turn was lost: the bot stopped while it asked runner %s to start %s's turn, and the runner had not started it; it will not. The message was: %s",
		u.Runner, cmp.Or(m.UserName, m.From), Shorten(m.Text, 300))
	return lostNoticeOf(m.Key, text, m.Text, u.ByPerson)
}

// lostNoticeOf tells conversation k text, offering to run message again
// when a person wrote it: whoever presses the button sends it as theirs.
func lostNoticeOf(k ConversationKey, text, message string, byPerson bool) lostNotice {
	ans := answer{text: text}
	if byPerson {
		ans.choices, ans.typed = []Choice{{Label: "Run again", Command: message}}, "Send it again to run it again."
	}
	return lostNotice{to: k.Target(), ans: ans}
}

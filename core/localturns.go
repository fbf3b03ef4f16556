package core

import (
	"cmp"
	"fmt"
	"time"
)

// LocalTurns keeps, outside this process, which conversations have a
// turn running in it (on this machine, not on a runner): such a turn dies
// with the process, and the process that takes over from it (another
// gateway, on NATS) tells those conversations so. Its methods are called
// concurrently.
type LocalTurns interface {
	// Began records that t started; Ended that the turn of key ended.
	Began(t LocalTurn)
	Ended(key ConversationKey)
	// Lost hands over, once, the turns in platform's conversations that a
	// process of the bot that stopped without ending them left.
	Lost(platform string) []LocalTurn
}

// LocalTurn is a turn running in a process of the bot.
type LocalTurn struct {
	Key      ConversationKey
	From     string
	UserName string
	// Text is the message the turn answers.
	Text string
	// ByPerson says a person wrote Text (not a schedule, nor an agent):
	// only then is running it again offered to whoever presses the button.
	ByPerson bool
	Started  time.Time
	// Gateway names the process it ran in, set by LocalTurns.
	Gateway string
}

// localTurn records m's turn in conv as running here, when it runs on
// this machine, and returns what records its end.
func (r *Router) localTurn(m Message, conv Conversation, follow Plugin) (ended func()) {
	lt := r.cfg.LocalTurns
	if lt == nil || conv.Runner != "" || follow != nil {
		return func() {}
	}
	lt.Began(LocalTurn{Key: m.Key, From: m.From, UserName: m.UserName, Text: m.Text, ByPerson: m.origin == OriginPerson, Started: r.clock.Now()})
	return func() { lt.Ended(m.Key) }
}

// reportLost tells a's conversations whose turn ran in a process of the
// bot that stopped without ending it that the turn was lost, and offers
// to run a person's message again.
func (r *Router) reportLost(a *attached) {
	if r.cfg.LocalTurns == nil {
		return
	}
	for _, t := range r.cfg.LocalTurns.Lost(a.p.Name()) {
		text := fmt.Sprintf("⚠️ A turn was lost: gateway %s was answering %s's message when it stopped (it started at %s), and the turn ran inside it. The message was: %s",
			cmp.Or(t.Gateway, "(unknown)"), cmp.Or(t.UserName, t.From), t.Started.UTC().Format("15:04:05 UTC"), Shorten(t.Text, 300))
		r.logger.Warn("turn lost with the gateway it ran in", "conversation", t.Key.String(), "gateway", t.Gateway)
		if !t.ByPerson {
			r.reply(a, t.Key.Target(), text)
			continue
		}
		r.offer(a, t.Key.Target(), text, []Choice{{Label: "Run again", Command: t.Text}}, "Send it again to run it again.")
	}
}

package chaos

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
)

// shown is one of the bot's messages in a conversation, as it stands.
type shown struct {
	id   string
	text string
}

// side is a conversation's chat platform, seen from its user.
type side interface {
	name() string
	// say posts text from the conversation's user.
	say(tb testing.TB, c *conv, text string)
	// shown returns the bot's messages in the conversation, oldest first.
	shown(c *conv) []shown
	// changed is closed at the fake's next change.
	changed() <-chan struct{}
	// writes returns the bot's writes (sends and edits) so far, each with
	// its time, the conversation's key, and the error the fake answered.
	writes() []write
}

type write struct {
	at    time.Time
	key   string // the chat (Telegram) or channel (Slack)
	text  string
	error string
}

// telegramSide: each conversation is its user's private chat with the bot.
type telegramSide struct{ srv *telegramtest.Server }

func (telegramSide) name() string { return "telegram" }

func (s telegramSide) say(_ testing.TB, c *conv, text string) {
	s.srv.UserSays(c.tgUser.Private(), c.tgUser, 0, text)
}

func (s telegramSide) shown(c *conv) []shown {
	var out []shown
	for _, m := range s.srv.Messages(c.tgUser.ID) {
		text, err := telegramtest.ParseHTML(m.Text)
		if err != nil {
			text = m.Text
		}
		out = append(out, shown{id: strconv.Itoa(m.ID), text: text})
	}
	return out
}

func (s telegramSide) changed() <-chan struct{} { return s.srv.Changed() }

func (s telegramSide) writes() []write {
	var out []write
	for _, c := range s.srv.Calls("sendMessage", "editMessageText") {
		out = append(out, write{at: c.At, key: c.Params.Get("chat_id"), text: c.Params.Get("text"), error: c.Error})
	}
	return out
}

// slackSide: each conversation is a thread in a channel of its own,
// started by its user's slash command.
type slackSide struct{ srv *slacktest.Server }

func (slackSide) name() string { return "slack" }

func (s slackSide) say(tb testing.TB, c *conv, text string) {
	if c.thread == "" { // the start command
		s.srv.SlashCommand(tb, c.slUser, c.channel, "/claude", text[len("/claude "):])
		return
	}
	s.srv.Post(tb, c.slUser, c.channel, c.thread, text)
}

func (s slackSide) shown(c *conv) []shown {
	if c.thread == "" {
		if top := s.srv.Replies(c.channel, ""); len(top) > 0 {
			c.thread = top[0].TS
		}
	}
	var out []shown
	if c.thread == "" {
		return nil
	}
	if m, ok := s.srv.Message(c.channel, c.thread); ok {
		out = append(out, shown{id: m.TS, text: m.Text})
	}
	for _, m := range s.srv.Replies(c.channel, c.thread) {
		out = append(out, shown{id: m.TS, text: m.Text})
	}
	return out
}

func (s slackSide) changed() <-chan struct{} { return s.srv.Changed() }

func (s slackSide) writes() []write {
	var out []write
	for _, c := range s.srv.Calls() {
		if c.Method == "chat.postMessage" || c.Method == "chat.update" {
			out = append(out, write{at: c.At, key: c.Channel, text: c.Text, error: c.Error})
		}
	}
	return out
}

// goTB is a testing.TB for a goroutine of the run's own: the fakes'
// helpers fail through it, which ends that goroutine (as FailNow would)
// instead of the test's.
type goTB struct{ testing.TB }

func (g goTB) Fatal(args ...any) {
	g.TB.Helper()
	g.TB.Error(args...)
	runtime.Goexit()
}

func (g goTB) Fatalf(format string, args ...any) {
	g.TB.Helper()
	g.TB.Errorf(format, args...)
	runtime.Goexit()
}

func (g goTB) FailNow() {
	g.TB.Fail()
	runtime.Goexit()
}

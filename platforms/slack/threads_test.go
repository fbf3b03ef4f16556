package slack_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
)

// A reply in the thread a /claude start opens may reach the bot before
// the post of the thread's parent has even returned, and before the
// conversation is registered there: it waits for it, and reaches the
// model, first.
func TestFirstReplyInANewThreadIsKept(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	h.fake.OnBotPost(func(m slacktest.Message) {
		if m.ThreadTS != "" || !strings.Contains(m.Text, "/claude start") {
			return
		}
		h.fake.Post(t, alice, general, m.TS, "first words")
		// Envelopes are handled in order: once the next is acknowledged,
		// the bot has read the reply.
		h.fake.WaitAck(t, h.fake.Post(t, bob, general, "", "lunch?").Envelopes[0])
	})
	thread := h.startThread(alice, general)
	h.fake.Post(t, alice, general, thread, "second")
	h.waitReply(general, thread, "echo: second")
	var prompts []string
	for _, turn := range h.plugin.Turns() {
		prompts = append(prompts, turn.Prompt)
	}
	if !slices.Equal(prompts, []string{"first words", "second"}) {
		t.Errorf("the model received %q, want the first words, then the second; the thread: %q",
			prompts, texts(h.fake.Replies(general, thread)))
	}
}

// A reply in a thread of the bot's where no conversation is (the bot
// restarted without its state) gets a hint, once however many come, and
// only for someone the bot serves.
func TestThreadWithoutConversationHints(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		writer    string
		wantHints int
	}{
		{"someone served", alice, 1},
		{"someone not served", mallory, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, setup{})
			// The bot's thread parent, from before the restart.
			thread := h.fake.Post(t, slacktest.BotUser, general, "", "<@"+alice+"> `/claude start`").TS
			h.fake.Post(t, tt.writer, general, thread, "hello?")
			h.fake.Post(t, tt.writer, general, thread, "anyone?")
			// A mention in the thread is handled after the replies.
			h.fake.Post(t, alice, general, thread, mention+" /status")
			h.waitReply(general, thread, "No conversation here yet")
			hints := 0
			for _, m := range h.fake.Replies(general, thread) {
				if strings.Contains(m.Text, "No conversation in this thread") {
					hints++
					if want := "(the bot may have restarted): " + mention + " start here, or " + mention + " claude resume to continue one."; !strings.Contains(m.Text, want) {
						t.Errorf("hint = %q, want it to say %q", m.Text, want)
					}
				}
			}
			if hints != tt.wantHints {
				t.Errorf("%d hints, want %d; the thread: %q", hints, tt.wantHints, texts(h.fake.Replies(general, thread)))
			}
			if n := len(h.plugin.Turns()); n != 0 {
				t.Errorf("the plugin ran %d turns", n)
			}
		})
	}
}

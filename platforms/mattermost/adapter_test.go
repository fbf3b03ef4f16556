package mattermost_test

import (
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// A command typed at the top of a channel, with a space before its slash
// as Mattermost's clients need, starts a conversation in its post's
// thread; a reply there is a turn, streamed as edits of one post at most
// once per edit interval, with the turn's state as reactions on the
// user's post.
func TestStartInAThreadAndStreamTheReply(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(h.alice, h.fake.Channel)
	if err := h.adapter.Healthy(); err != nil {
		t.Errorf("Healthy = %v, want nil once connected", err)
	}
	msg := h.fake.Say(t, h.alice, h.fake.Channel, thread, "live: hello")
	turn := h.plugin.Next(t)
	if want := (core.ConversationKey{Platform: "mattermost", Channel: h.fake.Channel, Thread: thread}); turn.Key != want {
		t.Errorf("turn key = %+v, want %+v (the thread, any user)", turn.Key, want)
	}
	if turn.Prompt != "live: hello" {
		t.Errorf("prompt = %q", turn.Prompt)
	}
	turn.Emit(t, core.TextEvent("Hel"))
	h.waitReply(h.fake.Channel, thread, "Hel")
	turn.Emit(t, core.TextEvent("lo **world**"))
	h.waitReply(h.fake.Channel, thread, "Hello **world**")
	h.forgetTimers()
	turn.Emit(t, core.TextEvent(" & more"))
	if d := h.waitTimer(); d != time.Second {
		t.Errorf("the coordinator waits %v for the next edit, want 1s", d)
	}
	h.clock.Advance(time.Second)
	h.waitReply(h.fake.Channel, thread, "Hello **world** & more")
	turn.End(t, core.TurnResult{Duration: 2 * time.Second, CostUSD: 0.01})
	want := "Hello **world** & more\n\n— 2.0s · $0.0100"
	replies := h.waitReply(h.fake.Channel, thread, want)
	if len(replies) != 2 || replies[1].Message != want {
		t.Fatalf("thread = %q, want the start notice and %q", messages(replies), want)
	}
	var last time.Time
	for _, at := range replies[1].EditTimes {
		if !last.IsZero() && at.Sub(last) < time.Second {
			t.Errorf("edits at %v and %v: closer than the 1s edit interval", last, at)
		}
		last = at
	}
	h.until("the done reaction alone on the message", func() bool {
		p, _ := h.fake.Post(msg.ID)
		return len(p.Reactions) == 1 && p.Reactions[0].Emoji == "white_check_mark"
	})
	if top := h.fake.BotReplies(h.fake.Channel, ""); len(top) != 0 {
		t.Errorf("the bot posted at the top of the channel: %q", messages(top))
	}
	if failed := h.fake.Failed(); len(failed) != 0 {
		t.Errorf("calls failed: %+v", failed)
	}
}

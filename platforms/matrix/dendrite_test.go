package matrix_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"

	"github.com/jake-bot/jake-bot/core"
)

// A command at the top of a room starts a conversation in its thread; a
// message there is a turn, streamed as m.replace edits of one m.notice in
// Matrix HTML, with the turn's state as the bot's reaction on the user's
// message. Talk at the top of the room starts nothing.
func TestStartInAThreadAndStreamTheReply(t *testing.T) {
	t.Parallel()
	h := start(t)
	room := h.room()
	thread := h.startThread(room)
	h.say(h.bob, room, "", "lunch, anyone?")
	msg := h.say(h.alice, room, thread, "live: hello")
	turn := h.plugin.Next(t)
	if want := (core.ConversationKey{Platform: "matrix", Channel: room.String(), Thread: thread.String()}); turn.Key != want {
		t.Errorf("turn key = %+v, want %+v (the thread, any user)", turn.Key, want)
	}
	turn.Emit(t, core.TextEvent("Hel"))
	h.waitReply(room, thread, "Hel")
	turn.Emit(t, core.TextEvent("lo **world** & `code`"))
	h.waitReply(room, thread, "Hello world & code")
	turn.End(t, core.TurnResult{Duration: 2 * time.Second, CostUSD: 0.01})
	replies := h.waitReply(room, thread, "2.0s")
	if len(replies) != 2 {
		t.Fatalf("thread = %q, want the start notice and the reply", bodies(replies))
	}
	r := replies[1]
	if r.Content.MsgType != event.MsgNotice || r.Content.Format != event.FormatHTML ||
		!strings.Contains(r.Content.FormattedBody, "Hello <b>world</b> &amp; <code>code</code>") {
		t.Errorf("reply = %+v, want an m.notice in HTML", r.Content)
	}
	if r.Edits < 2 {
		t.Errorf("the reply was edited %d times, want it streamed as edits", r.Edits)
	}
	h.seen.Until(t, "the done reaction alone on alice's message", func() bool {
		return slices.Equal(h.message(room, msg).Reactions[h.bot.ID], []string{"✅"})
	})
	if top := h.botMessages(room, ""); len(top) != 0 {
		t.Errorf("the bot wrote at the top of the room: %q", bodies(top))
	}
}

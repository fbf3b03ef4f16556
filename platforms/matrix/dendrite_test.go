package matrix_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/matrix/matrixtest"
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

// ask starts a live turn in a new thread of alice's and has it ask about
// a Bash call; it returns the thread, the turn's answers and its end.
func (h *harness) ask(room id.RoomID) (id.EventID, chan core.Answer, func()) {
	h.t.Helper()
	thread := h.startThread(room)
	h.say(h.alice, room, thread, "live: clean the build")
	turn := h.plugin.Next(h.t)
	answers := make(chan core.Answer, 1)
	go func() {
		turn.Events() <- core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "`rm -rf build`",
			Answer: func(a core.Answer) { answers <- a }}}
	}()
	return thread, answers, func() { turn.End(h.t, core.TurnResult{}) }
}

// A question offers its choices as numbered reactions the bot adds; the
// author is pinged with an m.text that mentions her. Bob, allowed but
// not the author, reacting changes nothing; alice's reaction answers,
// and the question loses the bot's reactions.
func TestQuestionAnsweredByAReaction(t *testing.T) {
	t.Parallel()
	h := start(t)
	room := h.room()
	thread, answers, end := h.ask(room)
	defer end()
	var q matrixtest.Message
	h.seen.Until(t, "the question with its three reactions", func() bool {
		for _, m := range h.botMessages(room, thread) {
			if strings.Contains(m.Content.Body, "Allow Bash?") && len(m.Reactions[h.bot.ID]) == 3 {
				q = m
				return true
			}
		}
		return false
	})
	if got := q.Reactions[h.bot.ID]; !slices.Equal(got, []string{"1️⃣", "2️⃣", "3️⃣"}) {
		t.Errorf("the bot's reactions %q, want 1️⃣ 2️⃣ 3️⃣", got)
	}
	if !strings.Contains(q.Content.Body, "1️⃣ Allow · 2️⃣ Always allow Bash · 3️⃣ Deny") {
		t.Errorf("question %q has no legend", q.Content.Body)
	}
	h.seen.Until(t, "alice's ping", func() bool {
		for _, m := range h.botMessages(room, thread) {
			if m.Content.MsgType == event.MsgText && m.Content.Mentions != nil && m.Content.Mentions.Has(h.alice.ID) &&
				strings.Contains(m.Content.FormattedBody, `href="https://matrix.to/#/`+h.alice.ID.String()+`"`) {
				return true
			}
		}
		return false
	})
	if _, err := h.bob.Client.SendReaction(context.Background(), room, q.ID, "1️⃣"); err != nil {
		t.Fatal(err)
	}
	h.waitReply(room, thread, "Only the author of this turn")
	select {
	case a := <-answers:
		t.Fatalf("bob's reaction answered the question: %+v", a)
	default:
	}
	if _, err := h.alice.Client.SendReaction(context.Background(), room, q.ID, "1️⃣"); err != nil {
		t.Fatal(err)
	}
	if a := <-answers; a.Decision != core.Allow || a.By != h.alice.ID.String() {
		t.Errorf("answer %+v, want alice's allow", a)
	}
	h.seen.Until(t, "the question settled, without the bot's reactions", func() bool {
		m := h.message(room, q.ID)
		return strings.Contains(m.Content.Body, "Allowed") && len(m.Reactions[h.bot.ID]) == 0
	})
}

// A file sent in a thread is saved in the workdir for the turn; a file
// the bot sends arrives as m.file (an image as m.image) in the thread,
// with its caption, downloadable from the media repository.
func TestFilesBothWays(t *testing.T) {
	t.Parallel()
	h := start(t)
	room := h.room()
	thread := h.startThread(room)
	ctx := context.Background()
	up, err := h.alice.Client.UploadBytesWithName(ctx, []byte("all green\n"), "text/plain", "report.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := &event.MessageEventContent{MsgType: event.MsgFile, Body: "read this", FileName: "report.txt", URL: up.ContentURI.CUString(),
		Info: &event.FileInfo{MimeType: "text/plain", Size: 10}}
	c.RelatesTo = (&event.RelatesTo{}).SetThread(thread, thread)
	if _, err := h.alice.Client.SendMessageEvent(ctx, room, event.EventMessage, c); err != nil {
		t.Fatal(err)
	}
	turn := <-h.plugin.Started()
	if !strings.HasPrefix(turn.Prompt, "read this") || !strings.Contains(turn.Prompt, "report.txt") {
		t.Errorf("prompt = %q, want the caption and the saved file", turn.Prompt)
	}
	h.waitReply(room, thread, "echo: read this")

	target := core.Target{Platform: "matrix", Channel: room.String(), Thread: thread.String()}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, f := range []struct {
		name    string
		data    []byte
		caption string
		kind    event.MessageType
	}{
		{"out.txt", []byte("hello\n"), "the output", event.MsgFile},
		{"plot.png", png, "", event.MsgImage},
	} {
		if _, err := h.adapter.SendFile(ctx, target, f.name, f.data, f.caption); err != nil {
			t.Fatalf("SendFile(%s) = %v", f.name, err)
		}
		var got matrixtest.Message
		h.seen.Until(t, "the file "+f.name, func() bool {
			for _, m := range h.botMessages(room, thread) {
				if m.Content.FileName == f.name {
					got = m
					return true
				}
			}
			return false
		})
		if got.Content.MsgType != f.kind || got.Content.Body != cmp.Or(f.caption, f.name) {
			t.Errorf("%s arrived as %s %q, want %s captioned %q", f.name, got.Content.MsgType, got.Content.Body, f.kind, f.caption)
		}
		uri, _ := got.Content.URL.Parse()
		data, err := h.alice.Client.DownloadBytes(ctx, uri)
		if err != nil || string(data) != string(f.data) {
			t.Errorf("download %s = %q, %v; want %q", f.name, data, err, f.data)
		}
	}
}

// A direct chat (the bot and one person) is one conversation: commands
// and turns at its top level, replies there too.
func TestDirectChatIsOneConversation(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	resp, err := h.alice.Client.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "trusted_private_chat", IsDirect: true, Invite: []id.UserID{h.bot.ID}})
	if err != nil {
		t.Fatal(err)
	}
	room := resp.RoomID
	h.joined(room)
	h.say(h.alice, room, "", "/claude start")
	h.waitReply(room, "", "conversation started")
	h.say(h.alice, room, "", "hello there")
	turn := <-h.plugin.Started()
	if want := (core.ConversationKey{Platform: "matrix", Channel: room.String()}); turn.Key != want {
		t.Errorf("turn key = %+v, want %+v (the room)", turn.Key, want)
	}
	h.waitReply(room, "", "echo: hello there")
}

// The bot joins only the rooms allowed users invite it to; in an
// encrypted room it says, in plain text, that it does not support them,
// and an encrypted message starts nothing.
func TestInvitationsAndEncryptedRooms(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	theirs, err := h.mallory.Client.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Invite: []id.UserID{h.bot.ID, h.alice.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.alice.Client.JoinRoomByID(ctx, theirs.RoomID); err != nil {
		t.Fatal(err)
	}
	h.seen.Until(t, "the bot to reject mallory's invitation", func() bool {
		for _, ev := range h.seen.Events(theirs.RoomID) {
			if ev.Type == event.StateMember && ev.GetStateKey() == h.bot.ID.String() && ev.Content.AsMember().Membership == event.MembershipLeave {
				return true
			}
		}
		return false
	})

	enc, err := h.alice.Client.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Invite: []id.UserID{h.bob.ID, h.bot.ID},
		InitialState: []*event.Event{{Type: event.StateEncryption, Content: event.Content{Parsed: &event.EncryptionEventContent{Algorithm: id.AlgorithmMegolmV1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.bob.Client.JoinRoomByID(ctx, enc.RoomID); err != nil {
		t.Fatal(err)
	}
	h.joined(enc.RoomID)
	if _, err := h.alice.Client.SendMessageEvent(ctx, enc.RoomID, event.EventEncrypted, map[string]any{
		"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnAC", "sender_key": "abc", "session_id": "def", "device_id": "ALICE"}); err != nil {
		t.Fatal(err)
	}
	var refusal matrixtest.Message
	h.seen.Until(t, "the refusal", func() bool {
		for _, m := range h.botMessages(enc.RoomID, "") {
			refusal = m
			return true
		}
		return false
	})
	if !strings.Contains(refusal.Content.Body, "does not support encrypted rooms") || refusal.Content.FormattedBody != "" {
		t.Errorf("refusal = %+v, want plain text saying encrypted rooms are not supported", refusal.Content)
	}
	if turns := h.plugin.Turns(); len(turns) != 0 {
		t.Errorf("turns = %d, want none", len(turns))
	}
}

// The homeserver's 429 (M_LIMIT_EXCEEDED) is a core.RateLimitError after
// its retry_after_ms. Dendrite limits uploads (not messages, edits nor
// redactions) to 20 requests in flight per 500ms: 30 files sent at once
// meet it.
func TestTheHomeserversRateLimit(t *testing.T) {
	t.Parallel()
	h := start(t)
	room := h.room()
	target := core.Target{Platform: "matrix", Channel: room.String()}
	errs := make(chan error, 30)
	for i := range cap(errs) {
		go func() {
			_, err := h.adapter.SendFile(context.Background(), target, fmt.Sprintf("f%d.txt", i), []byte("x"), "")
			errs <- err
		}()
	}
	var limited *core.RateLimitError
	for range cap(errs) {
		err := <-errs
		if rl, ok := core.AsRateLimit(err); ok {
			limited = rl
		} else if err != nil {
			t.Errorf("SendFile = %v, want a RateLimitError or nil", err)
		}
	}
	if limited == nil {
		t.Fatal("30 uploads at once met no 429")
	}
	if limited.RetryAfter != 500*time.Millisecond || !strings.Contains(limited.Error(), "M_LIMIT_EXCEEDED") {
		t.Errorf("RateLimitError = %v after %v, want M_LIMIT_EXCEEDED after Dendrite's retry_after_ms (500ms)", limited, limited.RetryAfter)
	}
}

// What was said in a room before the bot joined is its past: a command
// there starts nothing once the bot joins, while one sent after does.
func TestWhatWasSaidBeforeTheBotJoinedStartsNothing(t *testing.T) {
	t.Parallel()
	h := start(t)
	ctx := context.Background()
	resp, err := h.alice.Client.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Invite: []id.UserID{h.bob.ID}})
	if err != nil {
		t.Fatal(err)
	}
	room := resp.RoomID
	if _, err := h.bob.Client.JoinRoomByID(ctx, room); err != nil {
		t.Fatal(err)
	}
	old := h.say(h.alice, room, "", "/claude start")
	if _, err := h.alice.Client.InviteUser(ctx, room, &mautrix.ReqInviteUser{UserID: h.bot.ID}); err != nil {
		t.Fatal(err)
	}
	h.joined(room)
	thread := h.startThread(room)
	h.say(h.alice, room, thread, "hello")
	h.waitReply(room, thread, "echo: hello")
	if got := h.botMessages(room, old); len(got) != 0 {
		t.Errorf("the command sent before the bot joined was answered: %q", bodies(got))
	}
}

package mattermost_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each thread is a conversation of its own, shared by everyone allowed
// there; the bot's own posts, which the server echoes on the event
// stream, start nothing; a command about a conversation typed at the top
// of the channel acts in the thread its author used last.
func TestThreadsAreSeparateSharedConversations(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	ch := h.fake.Channel
	a := h.startThread(h.alice, ch)
	b := h.startThread(h.alice, ch)
	h.fake.Say(t, h.alice, ch, a, "one")
	h.waitReply(ch, a, "echo: one")
	h.fake.Say(t, h.alice, ch, b, "two")
	h.waitReply(ch, b, "echo: two")
	h.fake.Say(t, h.bob, ch, a, "three")
	h.waitReply(ch, a, "echo: three")
	turns := h.plugin.WaitTurns(t, 3)
	var got []string
	for _, turn := range turns {
		got = append(got, fmt.Sprintf("%s %s %q", turn.Key.Thread, turn.Prompt, turn.SessionID))
	}
	want := []string{a + ` one ""`, b + ` two ""`, a + ` three "session-1"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	status := h.fake.Say(t, h.bob, ch, "", " /status")
	h.waitReply(ch, a, "Session: session-1")
	if n := len(h.fake.BotReplies(ch, status.ID)); n != 0 {
		t.Errorf("/status answered in its own post's thread too")
	}
	// People talking at the top of the channel, and in a thread of their
	// own, are not the bot's business.
	chat := h.fake.Say(t, h.alice, ch, "", "lunch?")
	h.fake.Say(t, h.bob, ch, chat.ID, "yes")
	h.fake.Say(t, h.alice, ch, a, "four")
	h.waitReply(ch, a, "echo: four")
	if n := len(h.plugin.Turns()); n != 4 {
		t.Errorf("%d turns ran, want 4: chatter and the bot's own posts start none", n)
	}
	if replies := h.fake.BotReplies(ch, chat.ID); len(replies) != 0 {
		t.Errorf("the bot answered chatter: %q", messages(replies))
	}
}

// "@bot /claude start" works as the command does; a command typed
// without the space (an API client, the mobile app) too.
func TestStartForms(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	for _, text := range []string{"@jakebot /claude start", "@JakeBot: /claude start", "/claude start"} {
		p := h.fake.Say(t, h.alice, h.fake.Channel, "", text)
		h.waitReply(h.fake.Channel, p.ID, "conversation started")
	}
}

// Someone not allowed is refused once per place, told their id, and runs
// nothing, in a thread of their own or in someone else's conversation.
func TestStrangersAreRefused(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	ch := h.fake.Channel
	p := h.fake.Say(t, h.mallory, ch, "", " /claude start")
	h.waitReply(ch, p.ID, "not on this bot's allow-list. Your mattermost user id is "+h.mallory.ID)
	thread := h.startThread(h.alice, ch)
	h.fake.Say(t, h.mallory, ch, thread, "rm -rf /")
	h.waitReply(ch, thread, "not on this bot's allow-list")
	h.fake.Say(t, h.mallory, ch, thread, "again")
	h.fake.Say(t, h.alice, ch, thread, "hello")
	replies := h.waitReply(ch, thread, "echo: hello")
	refusals := 0
	for _, r := range replies {
		refusals += strings.Count(r.Message, "allow-list")
	}
	if refusals != 1 {
		t.Errorf("mallory was refused %d times in the thread, want once: %q", refusals, messages(replies))
	}
	if turns := h.plugin.Turns(); len(turns) != 1 || turns[0].Prompt != "hello" {
		t.Errorf("turns %+v, want alice's alone", turns)
	}
}

// A direct message is a place to start from too: a plain message at its
// top gets a hint (someone not allowed, nothing); a mention in a thread
// without a conversation, a hint saying so.
func TestHints(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	dm := h.fake.DirectChannel(h.alice)
	hello := h.fake.Say(t, h.alice, dm, "", "hello?")
	h.waitReply(dm, hello.ID, "send ` /claude start [workdir]` (with a space before the slash")
	other := h.fake.DirectChannel(h.mallory)
	h.fake.Say(t, h.mallory, other, "", "hello?")
	thread := h.startThread(h.alice, dm)
	h.fake.Say(t, h.alice, dm, thread, "and now?")
	h.waitReply(dm, thread, "echo: and now?")
	chat := h.fake.Say(t, h.bob, h.fake.Channel, "", "lunch?")
	h.fake.Say(t, h.alice, h.fake.Channel, chat.ID, "@jakebot can you help?")
	h.waitReply(h.fake.Channel, chat.ID, "No conversation in this thread")
	if got := h.fake.Thread(other, ""); len(got) != 1 {
		t.Errorf("the bot answered mallory: %q", messages(got))
	}
}

// A file sent with a message is downloaded with the bot's token and saved
// in the workdir, named in the prompt; /file sends one into the thread
// with its caption.
func TestFilesBothWays(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	ch := h.fake.Channel
	thread := h.startThread(h.alice, ch)
	notes := []byte("line one\nline two\n")
	id := h.fake.Upload(t, h.alice, ch, "notes.txt", notes)
	h.fake.Say(t, h.alice, ch, thread, "read this", id)
	h.waitReply(ch, thread, "echo: read this")
	turn := h.plugin.WaitTurns(t, 1)[0]
	if !strings.Contains(turn.Prompt, "notes.txt") {
		t.Errorf("prompt %q does not name the file", turn.Prompt)
	}
	matches, _ := filepath.Glob(filepath.Join(h.root, ".jakebot", "uploads", "*", "notes.txt"))
	if len(matches) != 1 {
		t.Fatalf("uploads %v, want notes.txt saved once", matches)
	}
	if data, _ := os.ReadFile(matches[0]); string(data) != string(notes) {
		t.Errorf("saved %q, want %q", data, notes)
	}
	if got := h.fake.Downloads(); !slices.Equal(got, []string{id}) {
		t.Errorf("downloads %v, want %s once", got, id)
	}
	if err := os.WriteFile(filepath.Join(h.root, "report.txt"), []byte("all green\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.fake.Say(t, h.alice, ch, thread, " /file report.txt")
	h.until("the file in the thread", func() bool {
		for _, p := range h.fake.BotReplies(ch, thread) {
			for _, id := range p.FileIDs {
				f, _ := h.fake.File(id)
				return f.Name == "report.txt" && string(f.Data) == "all green\n"
			}
		}
		return false
	})
	if failed := h.fake.Failed(); len(failed) != 0 {
		t.Errorf("calls failed: %+v", failed)
	}
}

// When the event stream drops, the bot reconnects with the stream's id
// and the next sequence number, and the server sends what was said
// meanwhile; after a server restart, which cannot resume, it goes on with
// a new stream.
func TestReconnects(t *testing.T) {
	t.Parallel()
	h := start(t, setup{})
	thread := h.startThread(h.alice, h.fake.Channel)
	h.fake.Disconnect()
	h.fake.Say(t, h.alice, h.fake.Channel, thread, "said while you were away")
	h.waitReply(h.fake.Channel, thread, "echo: said while you were away")
	if connects, resumes := h.fake.Connects(); connects != 2 || resumes != 1 {
		t.Errorf("%d connections, %d resumed; want the second to resume the stream", connects, resumes)
	}
	h.fake.Restart()
	h.until("a third connection", func() bool { connects, _ := h.fake.Connects(); return connects == 3 })
	h.fake.Say(t, h.alice, h.fake.Channel, thread, "still there?")
	h.waitReply(h.fake.Channel, thread, "echo: still there?")
	if err := h.adapter.Healthy(); err != nil {
		t.Errorf("Healthy = %v once reconnected", err)
	}
	if n := len(h.plugin.Turns()); n != 2 {
		t.Errorf("%d turns, want 2: a resumed event runs once", n)
	}
}

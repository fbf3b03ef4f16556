package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

func TestConnectsAndRegistersCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	gw := h.fake.Gateway()
	if len(gw.Identifies) != 1 {
		t.Fatalf("IDENTIFY sent %d times, want 1", len(gw.Identifies))
	}
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	if err := json.Unmarshal(gw.Identifies[0], &id); err != nil {
		t.Fatal(err)
	}
	if want := int(intents); id.Intents != want {
		t.Errorf("intents = %b, want %b", id.Intents, want)
	}
	// Registered from core's command table: a command per first word,
	// further words as subcommands, arguments as options.
	type option struct {
		Type     int
		Name     string
		Required bool
		Options  []option
	}
	var shapes []string
	for _, raw := range h.fake.Commands() {
		var c struct {
			Name    string
			Options []option
		}
		_ = json.Unmarshal(raw, &c)
		shape := c.Name
		for _, o := range c.Options {
			shape += fmt.Sprintf(" %s:%d", o.Name, o.Type)
			for _, oo := range o.Options {
				shape += fmt.Sprintf("(%s:%d:%v)", oo.Name, oo.Type, oo.Required)
			}
		}
		shapes = append(shapes, shape)
	}
	want := []string{
		"claude start:1(workdir:3:false) conversations:1 resume:1(id:3:true) now:1(schedule:3:true)",
		"resume id:3", "status all:5", "cost all:5", "workdir set:1(path:3:true)", "model name:3", "mode name:3", "file path:3", "diff", "merge", "ask plugin_and_question:3", "review plugin:3", "pair plugin_and_rounds:3", "at when_and_message:3", "every interval_and_message:3", "schedules", "unschedule number:3", "runners", "limits", "stop", "now id:3", "steer message:3", "queue message:3", "allow always:3", "answer answer:3", "deny reason:3", "conversation end:1", "help",
	}
	if diff := cmp.Diff(want, shapes); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	calls := h.fake.CallsTo("PUT", "applications/*/guilds/*/commands")
	if len(calls) != 1 {
		t.Fatalf("%d bulk overwrites, want 1", len(calls))
	}
	if got := calls[0].Authorization; got != "Bot "+h.fake.Token {
		t.Errorf("Authorization = %q, want the bot token", got)
	}
	if err := h.adapter.Healthy(); err != nil {
		t.Errorf("Healthy after READY = %v, want nil", err)
	}
	_ = discordgo.ChannelTypeGuildText
}

func TestStartOpensThread(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	in := h.fake.Slash(h.owner, h.fake.TextChannel, "claude start", "workdir", "proj")
	resp := h.response(in)
	thread := h.fake.Threads(h.fake.TextChannel)
	if len(thread) != 1 {
		t.Fatalf("threads = %v, want 1", thread)
	}
	if !strings.Contains(resp.Content, "<#"+thread[0].ID+">") {
		t.Errorf("response = %q, want a link to the thread", resp.Content)
	}
	h.waitBot(thread[0].ID, "conversation started")
	// Someone else writing first, mentioning the bot, names nothing.
	h.fake.Say(h.stranger(), thread[0].ID, "<@"+h.fake.BotID+"> rename this to something rude")
	h.waitBot(thread[0].ID, "allow-list")
	h.fake.Say(h.owner, thread[0].ID, "fix the flaky test please")
	h.waitBot(thread[0].ID, "echo: fix the flaky test please")
	h.fake.WaitFor("thread renamed", func() bool {
		c, _ := h.fake.Channel(thread[0].ID)
		return c.Name == "proj · fix the flaky test please"
	})
}

// A turn that ran long ends with a message that @mentions its author,
// and only them: the streamed reply's edits notify nobody.
func TestLongTurnPingsItsAuthor(t *testing.T) {
	t.Parallel()
	p := &plugintest.Scripted{Script: func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.TextEvent("all done"))
		return core.TurnResult{Duration: 5 * time.Minute}, nil
	}}
	h := newHarness(t, p, nil)
	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "take your time")
	ping := h.waitBot(thread, "finished your turn after 5m0s")
	if !strings.HasPrefix(ping.Content, "<@"+h.owner.ID+"> ✅ Claude Code finished your turn") {
		t.Errorf("ping = %q, want it to mention the author", ping.Content)
	}
	call := h.fake.WaitCall("POST", "channels/*/messages", func(c discordtest.Call) bool {
		return strings.Contains(string(c.Body), "finished your turn")
	})
	var body struct {
		AllowedMentions struct {
			Parse []string `json:"parse"`
			Users []string `json:"users"`
		} `json:"allowed_mentions"`
	}
	if err := json.Unmarshal(call.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.AllowedMentions.Parse) != 0 || len(body.AllowedMentions.Users) != 1 || body.AllowedMentions.Users[0] != h.owner.ID {
		t.Errorf("allowed_mentions = %+v, want only the author", body.AllowedMentions)
	}
}

// Files both ways through discordgo: attachments in (downloaded from
// their URL without the bot token), a voice message without
// TRANSCRIBE_CMD, a file over the limit refused, and /file out as a
// multipart message.
func TestFilesBothWays(t *testing.T) {
	t.Parallel()
	h := newHarnessRouting(t, nil, nil, func(rc *core.RouterConfig) {
		rc.LongReplyPages, rc.Document = 2, formatter.MarkdownText
	})
	thread := h.start(h.owner)
	uploads := filepath.Join(".jakebot", "uploads", core.Day(h.clock.Now()))
	workdir := filepath.Join(h.root, "proj")

	png := []byte("\x89PNG fake image bytes")
	h.fake.SayWithFiles(h.owner, thread, "what is wrong here?",
		discordtest.File{Name: "screen.png", ContentType: "image/png", Data: png})
	h.waitBot(thread, "echo: what is wrong here?")
	turns := h.plugin.Turns()
	tr := turns[len(turns)-1]
	shot := filepath.Join(uploads, "screen.png")
	if want := "what is wrong here?\n\nFiles I sent, saved in the workdir:\n- " + shot + " (image)"; tr.Prompt != want {
		t.Errorf("prompt = %q, want %q", tr.Prompt, want)
	}
	if len(tr.Images) != 1 || tr.Images[0] != filepath.Join(workdir, shot) {
		t.Errorf("images = %q, want the saved screenshot", tr.Images)
	}
	if got, err := os.ReadFile(filepath.Join(workdir, shot)); err != nil || !bytes.Equal(got, png) {
		t.Errorf("saved screenshot = %q, %v", got, err)
	}

	notes := []byte("line one\nline two\n")
	h.fake.SayWithFiles(h.owner, thread, "", discordtest.File{Name: "notes.txt", ContentType: "text/plain", Data: notes})
	h.waitBot(thread, "echo: Files I sent, saved in the workdir:\n- "+filepath.Join(uploads, "notes.txt"))

	h.fake.SayWithFiles(h.owner, thread, "", discordtest.File{Name: "voice-message.ogg", ContentType: "audio/ogg",
		Data: []byte("OggS"), Voice: true})
	h.waitEmbed(thread, "voice notes need TRANSCRIBE_CMD")
	h.fake.SayWithFiles(h.owner, thread, "", discordtest.File{Name: "huge.bin",
		Data: make([]byte, core.DefaultAttachmentMaxBytes+1)})
	h.waitEmbed(thread, "huge.bin is 20 MB, over the 20 MB limit")
	if _, err := os.Stat(filepath.Join(workdir, uploads, "huge.bin")); !os.IsNotExist(err) {
		t.Errorf("huge.bin was written: %v", err)
	}
	for _, c := range h.fake.Downloads() {
		if c.Authorization != "" {
			t.Errorf("download of %s sent Authorization %q", c.Path, c.Authorization)
		}
	}
	if n := len(h.fake.Downloads()); n != 3 {
		t.Errorf("%d downloads, want 3 (the over-sized file is refused by its declared size)", n)
	}

	h.fake.Slash(h.owner, thread, "file", "path", filepath.Join(uploads, "notes.txt"))
	sent := h.fake.WaitMessage(thread, func(m discordtest.Message) bool {
		return m.AuthorID == h.fake.BotID && len(m.Files) > 0
	})
	if f := sent.Files[0]; f.Name != "notes.txt" || !bytes.Equal(f.Data, notes) {
		t.Errorf("sent file %q = %q", f.Name, f.Data)
	}

	// A long answer: its first page, a note, and the whole as answer.md.
	long := strings.Repeat("a line of a long answer\n", 300)
	h.fake.Say(h.owner, thread, long)
	file := h.fake.WaitMessage(thread, func(m discordtest.Message) bool {
		return m.AuthorID == h.fake.BotID && len(m.Files) > 0 && m.Files[0].Name == "answer.md"
	})
	if got := string(file.Files[0].Data); !strings.HasPrefix(got, "echo: "+strings.TrimSpace(long)+"\n\n— ") {
		t.Errorf("answer.md (%d bytes) ends %q, want the whole answer and its footer", len(got), got[max(0, len(got)-80):])
	}
	h.waitBot(thread, "all of it is in answer.md")
}

// TestModelTextPingsNobody: a CLI's answer may say @everyone or mention a
// user or role; every write of it tells Discord to parse no mentions
// (allowed_mentions.parse=[]: an absent field would let it ping).
func TestModelTextPingsNobody(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	thread := h.start(h.owner)
	const text = "@everyone @here <@&1234> <@5678> look"
	h.fake.Say(h.owner, thread, text)
	h.waitBot(thread, "echo: "+text)
	n := 0
	for _, c := range h.fake.Calls() {
		if (c.Method != "POST" && c.Method != "PATCH") || !strings.Contains(c.Path, "messages") || !strings.Contains(string(c.Body), "@everyone") {
			continue // a thread's name does not ping
		}
		n++
		var body struct {
			AllowedMentions *struct {
				Parse *[]string `json:"parse"`
				Users []string  `json:"users"`
				Roles []string  `json:"roles"`
			} `json:"allowed_mentions"`
		}
		if err := json.Unmarshal(c.Body, &body); err != nil {
			t.Fatal(err)
		}
		if am := body.AllowedMentions; am == nil || am.Parse == nil || len(*am.Parse) != 0 || len(am.Users) != 0 || len(am.Roles) != 0 {
			t.Errorf("%s %s: allowed_mentions = %s, want parse=[]", c.Method, c.Path, c.Body)
		}
	}
	if n == 0 {
		t.Error("no write carried the answer")
	}
}

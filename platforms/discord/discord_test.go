package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
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
		"claude start:1(workdir:3:false) conversations:1 resume:1(id:3:true)",
		"resume id:3", "status all:5", "cost all:5", "workdir set:1(path:3:true)", "model name:3", "mode name:3", "file path:3", "diff", "merge", "at when_and_message:3", "every interval_and_message:3", "schedules", "unschedule number:3", "stop", "now id:3", "allow always:3", "answer answer:3", "deny reason:3", "conversation end:1", "help",
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
	p := &scriptPlugin{run: func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
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
	call := h.fake.WaitCall("POST", "channels/*/messages", func(c platformtest.DiscordCall) bool {
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

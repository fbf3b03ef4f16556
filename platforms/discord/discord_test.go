package discord

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/google/go-cmp/cmp"
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
		"resume id:3", "status all:5", "cost all:5", "workdir set:1(path:3:true)", "model name:3", "mode name:3", "diff", "merge", "stop", "now id:3", "allow always:3", "answer answer:3", "deny reason:3", "conversation end:1", "help",
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

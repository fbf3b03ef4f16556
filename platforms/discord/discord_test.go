package discord

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
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
	var names []string
	for _, raw := range h.fake.Commands() {
		var c struct{ Name string }
		_ = json.Unmarshal(raw, &c)
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, " "), "claude conversation status workdir stop help"; got != want {
		t.Errorf("commands = %q, want %q", got, want)
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
	h.fake.Say(h.owner, thread[0].ID, "fix the flaky test please")
	h.waitBot(thread[0].ID, "echo: fix the flaky test please")
	h.fake.WaitFor("thread renamed", func() bool {
		c, _ := h.fake.Channel(thread[0].ID)
		return c.Name == "proj · fix the flaky test please"
	})
}

package discord

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
)

func TestUnknownUserIsRefusedPrivately(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	stranger := h.fake.NewUser("stranger")
	in := h.fake.Slash(stranger, h.fake.TextChannel, "claude start", "workdir", "proj")
	resp := h.response(in)
	if cb, _ := h.fake.Callback(in); cb.Type != 5 || cb.Data.Flags&discordtest.Ephemeral == 0 {
		t.Errorf("callback = %+v, want a private deferred response", cb)
	}
	if resp.Flags&discordtest.Ephemeral == 0 || !strings.Contains(resp.Content, "allow-list") || !strings.Contains(resp.Content, stranger.ID) {
		t.Errorf("response = %+v, want a private refusal naming the user's id", resp)
	}
	if ths := h.fake.Threads(h.fake.TextChannel); len(ths) != 0 {
		t.Errorf("threads = %v: a refused start opened a thread", ths)
	}

	// A plain message has no private reply: the refusal is public.
	dm := h.fake.DM(stranger)
	h.fake.Say(stranger, dm, "hello")
	h.waitBot(dm, "allow-list")

	// Autocompletion shows a stranger nothing.
	ac := h.fake.Autocomplete(stranger, h.fake.TextChannel, "claude start", "workdir", "workdir", "")
	h.fake.WaitFor("autocomplete answer", func() bool { _, ok := h.fake.Callback(ac); return ok })
	if cb, _ := h.fake.Callback(ac); cb.Type != 8 || len(cb.Data.Choices) != 0 {
		t.Errorf("stranger's autocompletion = %+v, want no choices", cb)
	}
	if n := len(h.plugin.Turns()); n != 0 {
		t.Errorf("plugin ran %d turns for a stranger", n)
	}
}

// TestThreadsOff checks the conversation stays in the channel with
// DISCORD_THREADS=false, and that a public slash command's reply
// completes its deferred response.
func TestThreadsOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(c *Config, _ *discordtest.Server) { c.Threads = false })
	in := h.fake.Slash(h.owner, h.fake.TextChannel, "claude start", "workdir", "proj")
	if resp := h.response(in); !strings.Contains(resp.Content, "conversation started in "+h.root+"/proj") || resp.Flags != 0 {
		t.Errorf("response = %+v, want the start confirmation, public", resp)
	}
	if ths := h.fake.Threads(h.fake.TextChannel); len(ths) != 0 {
		t.Errorf("threads = %v, want none", ths)
	}
	h.fake.Say(h.owner, h.fake.TextChannel, "no mention needed")
	h.waitBot(h.fake.TextChannel, "echo: no mention needed")
}

func TestChannelMessagesNeedAMention(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	other := discordtest.User{ID: h.fake.NewID(), Name: "otherbot", Bot: true}
	h.fake.Say(other, h.fake.TextChannel, h.fake.Mention()+" /help")
	h.fake.Say(h.owner, h.fake.TextChannel, "talking among humans")
	h.fake.Say(h.owner, h.fake.TextChannel, h.fake.Mention()+" hello?")
	h.waitBot(h.fake.TextChannel, "No conversation here yet")
	// Events are handled in order: had the first two been taken, their
	// replies would be here by now.
	if ms := h.botMessages(h.fake.TextChannel); len(ms) != 1 {
		t.Errorf("bot messages = %+v, want only the answer to the mention", ms)
	}
	// A bare mention asks for help.
	h.fake.Say(h.owner, h.fake.TextChannel, h.fake.Mention())
	h.waitBot(h.fake.TextChannel, "/claude start [workdir]")
}

func TestAllowedRoleAdmitsMembersInTheServer(t *testing.T) {
	t.Parallel()
	var role string
	h := newHarness(t, nil, func(c *Config, fake *discordtest.Server) {
		role = fake.NewID()
		c.AllowedRoles = []string{role}
	})
	member := h.fake.NewUser("member", role)
	thread := h.start(member)
	h.fake.Say(member, thread, "hi from a role")
	h.waitBot(thread, "echo: hi from a role")
	// DMs carry no roles.
	dm := h.fake.DM(member)
	h.fake.Say(member, dm, "hi in private")
	h.waitBot(dm, "allow-list")
}

// TestWithoutMessageContentIntent: when the application has not enabled
// the privileged intent, the bot connects without it and still answers
// mentions and slash commands.
func TestWithoutMessageContentIntent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, func(_ *Config, fake *discordtest.Server) {
		fake.DisallowIntents(int(discordgo.IntentMessageContent))
	})
	ids := h.fake.Gateway().Identifies
	if len(ids) != 2 {
		t.Fatalf("%d IDENTIFYs, want a refused one and one without the intent", len(ids))
	}
	var id struct{ Intents int }
	_ = json.Unmarshal(ids[1], &id)
	if id.Intents&int(discordgo.IntentMessageContent) != 0 || id.Intents|int(discordgo.IntentMessageContent) != int(intents) {
		t.Errorf("second IDENTIFY intents = %b, want %b without Message Content", id.Intents, intents)
	}
	// A mention in a channel opens a thread just as the slash command does.
	h.fake.Say(h.owner, h.fake.TextChannel, h.fake.Mention()+" /claude start proj")
	var thread string
	h.fake.WaitFor("a thread", func() bool {
		ths := h.fake.Threads(h.fake.TextChannel)
		if len(ths) == 1 {
			thread = ths[0].ID
		}
		return thread != ""
	})
	h.waitBot(thread, "conversation started")
}

// TestStrangerIsRefusedOncePerPlace: the bot answers a stranger once in
// each place, however often they write, even where the answer is private
// (each one would spend the bot's rate limit): a second slash command is
// only acknowledged, its placeholder removed.
func TestStrangerIsRefusedOncePerPlace(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	stranger := h.stranger()
	first := h.fake.Slash(stranger, h.fake.TextChannel, "claude start", "workdir", "proj")
	second := h.fake.Slash(stranger, h.fake.TextChannel, "status")
	h.fake.WaitCall("DELETE", "webhooks/*/"+second.Token+"/messages/@original", nil)
	if resp, ok := h.fake.Response(first); !ok || !strings.Contains(resp.Content, "allow-list") {
		t.Errorf("first response = %+v, %v; want the refusal", resp, ok)
	}
	if resp, ok := h.fake.Response(second); ok {
		t.Errorf("second response = %+v, want none", resp)
	}
	if fs := h.fake.Followups(second); len(fs) != 0 {
		t.Errorf("second command's followups = %+v, want none", fs)
	}

	dm := h.fake.DM(stranger)
	for _, text := range []string{"one", "two", "three"} {
		h.fake.Say(stranger, dm, text)
	}
	// The same lane: once this command is settled, the lines before it are.
	last := h.fake.Slash(stranger, dm, "help")
	h.fake.WaitCall("DELETE", "webhooks/*/"+last.Token+"/messages/@original", nil)
	if ms := h.botMessages(dm); len(ms) != 1 || !strings.Contains(ms[0].Content, "allow-list") {
		t.Errorf("bot messages in the DM = %+v, want one refusal", ms)
	}
}

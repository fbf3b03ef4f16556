package discord

import (
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
)

// A user's first words in the thread a /claude start opens may reach the
// bot before the router has registered the conversation there: Discord
// delivers them on the gateway before it answers the call that opened the
// thread. They are held until the conversation is there, and reach the
// model, first; a slash command there sees the conversation too.
func TestFirstMessageInANewThreadIsKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	status := make(chan discordtest.Interaction, 1)
	h.fake.OnThreadStart(func(th discordtest.Channel) {
		status <- h.fake.Slash(h.owner, th.ID, "status")
		h.fake.Say(h.owner, th.ID, "first words")
		h.fake.Sync() // the bot has read them: the thread is not yet its own
	})
	thread := h.start(h.owner)
	if resp := h.response(<-status); !strings.Contains(resp.Content, "Claude Code") {
		t.Errorf("/status in the new thread = %q, want the conversation's", resp.Content)
	}
	h.fake.Say(h.owner, thread, "second")
	h.waitBot(thread, "echo: second")
	var prompts []string
	for _, turn := range h.plugin.Turns() {
		prompts = append(prompts, turn.Prompt)
	}
	if strings.Join(prompts, "|") != "first words|second" {
		t.Errorf("the model received %q, want the first words, then the second", prompts)
	}
}

// A message in a thread the bot opened where nobody has a conversation
// (the bot restarted without its state) gets a hint, once however many
// come; in anyone else's thread, in a thread where someone's conversation
// is, or from someone the bot does not serve, it gets nothing.
func TestThreadWithoutConversationHints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// place returns the thread and who writes there.
		place     func(h *harness, other discordtest.User) (string, discordtest.User)
		wantHints int
	}{
		{"the bot's thread, after a restart", func(h *harness, _ discordtest.User) (string, discordtest.User) {
			return h.fake.NewThread(h.fake.BotID, h.fake.TextChannel, "proj · before the restart").ID, h.owner
		}, 1},
		{"a user's thread", func(h *harness, other discordtest.User) (string, discordtest.User) {
			return h.fake.NewThread(other.ID, h.fake.TextChannel, "lunch").ID, h.owner
		}, 0},
		{"someone else's conversation", func(h *harness, other discordtest.User) (string, discordtest.User) {
			return h.start(other), h.owner
		}, 0},
		{"someone not served", func(h *harness, _ discordtest.User) (string, discordtest.User) {
			return h.fake.NewThread(h.fake.BotID, h.fake.TextChannel, "proj · before the restart").ID, h.stranger()
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var other discordtest.User
			h := newHarness(t, nil, func(c *Config, fake *discordtest.Server) {
				other = fake.NewUser("other")
				c.AllowedUsers = append(c.AllowedUsers, other.ID)
			})
			thread, writer := tt.place(h, other)
			h.fake.Say(writer, thread, "hello?")
			h.fake.Say(writer, thread, "anyone?")
			// The writer's slash command is handled after their messages.
			h.response(h.fake.Slash(writer, thread, "status"))
			hints := 0
			for _, m := range h.botMessages(thread) {
				if strings.Contains(m.Content, "No conversation in this thread") {
					hints++
					if want := "(the bot may have restarted): /claude start here, or /claude resume to continue one."; !strings.Contains(m.Content, want) {
						t.Errorf("hint = %q, want it to say %q", m.Content, want)
					}
				}
			}
			if hints != tt.wantHints {
				t.Errorf("%d hints, want %d", hints, tt.wantHints)
			}
			if n := len(h.plugin.Turns()); n != 0 {
				t.Errorf("the plugin ran %d turns", n)
			}
		})
	}
}

package discord

import (
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
)

// A member admitted by DISCORD_ALLOWED_ROLES, not by the allow-list, may
// schedule: Discord is asked for their roles each time the schedule
// fires. Their /every runs while they have the role, is skipped (and the
// chat told) when Discord cannot say, and once the role is gone it is
// refused, the chat told and the schedule removed.
func TestRoleAdmittedSchedulesAreCheckedWhenTheyFire(t *testing.T) {
	t.Parallel()
	var role string
	h := newHarnessDriving(t, nil, func(c *Config, fake *discordtest.Server) {
		role = fake.NewID()
		c.AllowedRoles = []string{role}
	}, nil, time.Minute)
	member := h.fake.NewUser("member", role)
	thread := h.start(member)
	h.fake.Say(member, thread, "/every 1h check in")
	h.waitBot(thread, "Scheduled #1 (every 1h0m0s)")
	members := "guilds/" + h.fake.GuildID + "/members/" + member.ID

	h.clock.Advance(time.Hour)
	h.waitBot(thread, "⏰ Schedule #1 (every 1h0m0s) sends: check in")
	h.waitBot(thread, "echo: check in")
	h.router.Wait() // its turn done: the next firing is not skipped
	if calls := h.fake.CallsTo("GET", members); len(calls) != 1 || calls[0].Status != 200 {
		t.Errorf("member lookups = %+v, want one answered", calls)
	}

	h.fake.RateLimit("GET", "guilds/*/members/*", time.Second, 1)
	h.clock.Advance(time.Hour)
	h.waitBot(thread, "⏰ Schedule #1 was not sent this time: discord could not say whether member is still admitted here.")
	if s := h.convs.Schedules(); len(s) != 1 {
		t.Fatalf("schedules = %+v, want #1 kept for its next time", s)
	}

	h.fake.SetRoles(member)
	h.clock.Advance(time.Hour)
	h.waitBot(thread, "⏰ Schedule #1 was not sent, and is removed: member is no longer admitted here")
	if s := h.convs.Schedules(); len(s) != 0 {
		t.Errorf("schedules = %+v, want none", s)
	}
	if turns := h.plugin.Turns(); len(turns) != 1 {
		t.Errorf("the plugin ran %d turns, want the one while the role was held", len(turns))
	}
	if calls := h.fake.CallsTo("GET", members); len(calls) != 3 {
		t.Errorf("%d member lookups, want one per firing", len(calls))
	}
}

// In a DM no role admits anyone, and without DISCORD_ALLOWED_ROLES
// nobody is admitted by one: Readmit asks Discord for no member then.
func TestReadmitOutsideAServer(t *testing.T) {
	t.Parallel()
	for _, roles := range []bool{true, false} {
		var role string
		h := newHarness(t, nil, func(c *Config, fake *discordtest.Server) {
			role = fake.NewID()
			if roles {
				c.AllowedRoles = []string{role}
			}
		})
		member := h.fake.NewUser("member", role)
		for channel, want := range map[string]bool{h.fake.TextChannel: roles, h.fake.DM(member): false} {
			key := core.ConversationKey{Platform: Name, User: member.ID, Channel: channel}
			if ok, err := h.adapter.Readmit(t.Context(), key, member.ID); ok != want || err != nil {
				t.Errorf("roles configured %v: Readmit in %s = %v, %v; want %v", roles, channel, ok, err, want)
			}
		}
		want := 0
		if roles {
			want = 1 // the server channel's
		}
		if n := len(h.fake.CallsTo("GET", "guilds/*/members/*")); n != want {
			t.Errorf("roles configured %v: %d member lookups, want %d", roles, n, want)
		}
	}
}

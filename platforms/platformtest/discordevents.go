package platformtest

import (
	"net/http"
	"strings"
	"time"
)

// DiscordUser is a person (or another bot) in the fake.
type DiscordUser struct {
	ID, Name string
	// Roles are the member's role ids in the server.
	Roles []string
	Bot   bool
}

// NewUser returns a user with a fresh id who is a member of the server
// with the given roles.
func (d *Discord) NewUser(name string, roles ...string) DiscordUser {
	d.mu.Lock()
	defer d.mu.Unlock()
	u := DiscordUser{ID: d.newID(), Name: name, Roles: roles}
	d.members[u.ID] = u
	return u
}

// SetRoles gives u, a member of the server, exactly roles from now on, as
// a server admin would, and returns u with them: GET
// guilds/<guild>/members/<u> answers them, and so do events u sends as
// the returned value.
func (d *Discord) SetRoles(u DiscordUser, roles ...string) DiscordUser {
	d.mu.Lock()
	defer d.mu.Unlock()
	u.Roles = roles
	d.members[u.ID] = u
	return u
}

// member answers GET guilds/<guild>/members/<user>; d.mu is held.
func (d *Discord) member(guild, user string) discordRESTReply {
	if guild != d.GuildID {
		return discordNotFound("Guild", 10004)
	}
	u, ok := d.members[user]
	if !ok {
		return discordNotFound("Member", 10007)
	}
	return discordReply(http.StatusOK, map[string]any{"user": discordUserJSON(u), "roles": discordStrings(u.Roles),
		"joined_at": time.Unix(0, 0).UTC().Format(time.RFC3339), "deaf": false, "mute": false})
}

// NewID returns a fresh snowflake, for role ids and the like.
func (d *Discord) NewID() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.newID()
}

// Mention is how a message mentions the bot.
func (d *Discord) Mention() string { return "<@" + d.BotID + ">" }

func discordUserJSON(u DiscordUser) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Name, "global_name": u.Name, "bot": u.Bot}
}

// Say dispatches MESSAGE_CREATE: u writes content in channel. A mention
// of the bot in content is listed in the message's mentions, as Discord
// does. It returns the message id.
func (d *Discord) Say(u DiscordUser, channel, content string) string {
	d.mu.Lock()
	m := d.addMessage(channel, u.ID, "")
	m.Content = content
	guild := d.guildOf(channel)
	d.notify()
	d.mu.Unlock()
	d.Dispatch("MESSAGE_CREATE", d.userMessage(m.ID, u, channel, guild, content))
	return m.ID
}

// Resend dispatches MESSAGE_CREATE again for a message Say sent, as a
// gateway replay would.
func (d *Discord) Resend(u DiscordUser, channel, id string) {
	d.mu.Lock()
	m := d.messages[id]
	guild := d.guildOf(channel)
	d.mu.Unlock()
	d.Dispatch("MESSAGE_CREATE", d.userMessage(id, u, channel, guild, m.Content))
}

func (d *Discord) userMessage(id string, u DiscordUser, channel, guild, content string) map[string]any {
	ev := map[string]any{"id": id, "channel_id": channel, "author": discordUserJSON(u), "content": content, "type": 0,
		"mentions": []any{}, "timestamp": time.Unix(0, 0).UTC().Format(time.RFC3339)}
	if strings.Contains(content, d.Mention()) {
		ev["mentions"] = []any{d.botUser()}
	}
	if guild != "" {
		ev["guild_id"] = guild
		ev["member"] = map[string]any{"roles": discordStrings(u.Roles)}
	}
	return ev
}

func discordStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// guildOf returns a channel's server; d.mu is held.
func (d *Discord) guildOf(channel string) string {
	if c := d.channels[channel]; c != nil {
		return c.GuildID
	}
	return ""
}

// DiscordInteraction names an interaction the fake dispatched.
type DiscordInteraction struct {
	ID, Token string
}

// discordInteractionState is an interaction's server-side state.
type discordInteractionState struct {
	id, channel string
	// response is the callback type, 0 before the callback.
	response  int
	ephemeral bool
	original  string // message id of the response
	callback  []byte
}

// Slash dispatches INTERACTION_CREATE for a slash command. command is
// the command and subcommand as typed ("claude start", "stop"); options
// are name, value pairs (string or bool values).
func (d *Discord) Slash(u DiscordUser, channel, command string, options ...any) DiscordInteraction {
	return d.command(u, channel, 2, command, "", options)
}

// Autocomplete dispatches an autocomplete interaction while u types into
// option focus; the other options are as for Slash.
func (d *Discord) Autocomplete(u DiscordUser, channel, command, focus string, options ...any) DiscordInteraction {
	return d.command(u, channel, 4, command, focus, options)
}

func (d *Discord) command(u DiscordUser, channel string, typ int, command, focus string, options []any) DiscordInteraction {
	words := strings.Fields(command)
	var leaf []any
	for i := 0; i+1 < len(options); i += 2 {
		name, _ := options[i].(string)
		o := map[string]any{"name": name, "type": 3, "value": options[i+1]}
		if _, ok := options[i+1].(bool); ok {
			o["type"] = 5
		}
		if name == focus {
			o["focused"] = true
		}
		leaf = append(leaf, o)
	}
	opts := leaf
	for i := len(words) - 1; i >= 1; i-- {
		opts = []any{map[string]any{"name": words[i], "type": 1, "options": discordList(opts)}}
	}
	data := map[string]any{"id": d.NewID(), "name": words[0], "type": 1, "options": discordList(opts)}
	return d.interact(u, channel, typ, data, nil)
}

func discordList(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

// Press dispatches INTERACTION_CREATE for a button press on message.
func (d *Discord) Press(u DiscordUser, channel, message, customID string) DiscordInteraction {
	data := map[string]any{"custom_id": customID, "component_type": 2}
	return d.interact(u, channel, 3, data, map[string]any{"id": message, "channel_id": channel})
}

func (d *Discord) interact(u DiscordUser, channel string, typ int, data, message map[string]any) DiscordInteraction {
	d.mu.Lock()
	in := DiscordInteraction{ID: d.newID(), Token: "itoken-" + d.newID()}
	d.interactions[in.Token] = &discordInteractionState{id: in.ID, channel: channel}
	guild := d.guildOf(channel)
	d.mu.Unlock()
	ev := map[string]any{"id": in.ID, "application_id": d.AppID, "type": typ, "data": data, "channel_id": channel,
		"token": in.Token, "version": 1, "locale": "en-US"}
	if guild != "" {
		ev["guild_id"] = guild
		ev["member"] = map[string]any{"user": discordUserJSON(u), "roles": discordStrings(u.Roles), "permissions": "0"}
	} else {
		ev["user"] = discordUserJSON(u)
	}
	if message != nil {
		ev["message"] = message
	}
	d.Dispatch("INTERACTION_CREATE", ev)
	return in
}

// Redispatch sends an interaction's INTERACTION_CREATE again, as a
// gateway replay would.
func (d *Discord) Redispatch(in DiscordInteraction) {
	d.gw.mu.Lock()
	var again discordFrame
	for _, f := range d.gw.log {
		if *f.T == "INTERACTION_CREATE" && strings.Contains(string(f.D), `"token":"`+in.Token+`"`) {
			again = f
		}
	}
	d.gw.mu.Unlock()
	if again.T != nil {
		d.Dispatch("INTERACTION_CREATE", again.D)
	}
}

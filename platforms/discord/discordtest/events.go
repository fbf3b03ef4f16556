package discordtest

import (
	"net/http"
	"strings"
	"time"
)

// User is a person (or another bot) in the fake.
type User struct {
	ID, Name string
	// Roles are the member's role ids in the server.
	Roles []string
	Bot   bool
}

// NewUser returns a user with a fresh id who is a member of the server
// with the given roles.
func (d *Server) NewUser(name string, roles ...string) User {
	d.mu.Lock()
	defer d.mu.Unlock()
	u := User{ID: d.newID(), Name: name, Roles: roles}
	d.members[u.ID] = u
	return u
}

// SetRoles gives u, a member of the server, exactly roles from now on, as
// a server admin would, and returns u with them: GET
// guilds/<guild>/members/<u> answers them, and so do events u sends as
// the returned value.
func (d *Server) SetRoles(u User, roles ...string) User {
	d.mu.Lock()
	defer d.mu.Unlock()
	u.Roles = roles
	d.members[u.ID] = u
	return u
}

// member answers GET guilds/<guild>/members/<user>; d.mu is held.
func (d *Server) member(guild, user string) restReply {
	if guild != d.GuildID {
		return notFound("Guild", 10004)
	}
	u, ok := d.members[user]
	if !ok {
		return notFound("Member", 10007)
	}
	return replyWith(http.StatusOK, map[string]any{"user": userJSON(u), "roles": stringList(u.Roles),
		"joined_at": time.Unix(0, 0).UTC().Format(time.RFC3339), "deaf": false, "mute": false})
}

// NewID returns a fresh snowflake, for role ids and the like.
func (d *Server) NewID() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.newID()
}

// Mention is how a message mentions the bot.
func (d *Server) Mention() string { return "<@" + d.BotID + ">" }

func userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Name, "global_name": u.Name, "bot": u.Bot}
}

// Say dispatches MESSAGE_CREATE: u writes content in channel. A mention
// of the bot in content is listed in the message's mentions, as Discord
// does. It returns the message id.
func (d *Server) Say(u User, channel, content string) string {
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
func (d *Server) Resend(u User, channel, id string) {
	d.mu.Lock()
	m := d.messages[id]
	guild := d.guildOf(channel)
	d.mu.Unlock()
	d.Dispatch("MESSAGE_CREATE", d.userMessage(id, u, channel, guild, m.Content))
}

func (d *Server) userMessage(id string, u User, channel, guild, content string) map[string]any {
	ev := map[string]any{"id": id, "channel_id": channel, "author": userJSON(u), "content": content, "type": 0,
		"mentions": []any{}, "timestamp": time.Unix(0, 0).UTC().Format(time.RFC3339)}
	if strings.Contains(content, d.Mention()) {
		ev["mentions"] = []any{d.botUser()}
	}
	if guild != "" {
		ev["guild_id"] = guild
		ev["member"] = map[string]any{"roles": stringList(u.Roles)}
	}
	return ev
}

func stringList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// guildOf returns a channel's server; d.mu is held.
func (d *Server) guildOf(channel string) string {
	if c := d.channels[channel]; c != nil {
		return c.GuildID
	}
	return ""
}

// Interaction names an interaction the fake dispatched.
type Interaction struct {
	ID, Token string
}

// interactionState is an interaction's server-side state.
type interactionState struct {
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
func (d *Server) Slash(u User, channel, command string, options ...any) Interaction {
	return d.command(u, channel, 2, command, "", options)
}

// Autocomplete dispatches an autocomplete interaction while u types into
// option focus; the other options are as for Slash.
func (d *Server) Autocomplete(u User, channel, command, focus string, options ...any) Interaction {
	return d.command(u, channel, 4, command, focus, options)
}

func (d *Server) command(u User, channel string, typ int, command, focus string, options []any) Interaction {
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
		opts = []any{map[string]any{"name": words[i], "type": 1, "options": anyList(opts)}}
	}
	data := map[string]any{"id": d.NewID(), "name": words[0], "type": 1, "options": anyList(opts)}
	return d.interact(u, channel, typ, data, nil)
}

func anyList(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

// Press dispatches INTERACTION_CREATE for a button press on message.
func (d *Server) Press(u User, channel, message, customID string) Interaction {
	data := map[string]any{"custom_id": customID, "component_type": 2}
	return d.interact(u, channel, 3, data, map[string]any{"id": message, "channel_id": channel})
}

func (d *Server) interact(u User, channel string, typ int, data, message map[string]any) Interaction {
	d.mu.Lock()
	in := Interaction{ID: d.newID(), Token: "itoken-" + d.newID()}
	d.interactions[in.Token] = &interactionState{id: in.ID, channel: channel}
	guild := d.guildOf(channel)
	d.mu.Unlock()
	ev := map[string]any{"id": in.ID, "application_id": d.AppID, "type": typ, "data": data, "channel_id": channel,
		"token": in.Token, "version": 1, "locale": "en-US"}
	if guild != "" {
		ev["guild_id"] = guild
		ev["member"] = map[string]any{"user": userJSON(u), "roles": stringList(u.Roles), "permissions": "0"}
	} else {
		ev["user"] = userJSON(u)
	}
	if message != nil {
		ev["message"] = message
	}
	d.Dispatch("INTERACTION_CREATE", ev)
	return in
}

// Redispatch sends an interaction's INTERACTION_CREATE again, as a
// gateway replay would.
func (d *Server) Redispatch(in Interaction) {
	d.gw.mu.Lock()
	var again frame
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

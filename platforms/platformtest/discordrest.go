package platformtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// discordError is Discord's JSON error body.
type discordError struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
}

type discordRESTReply struct {
	status  int
	body    any
	message string // the message created or edited
	// after runs once the call is routed and recorded, with no lock held,
	// before the call is answered: the gateway events the call causes.
	after func()
}

func discordReply(status int, body any) discordRESTReply {
	return discordRESTReply{status: status, body: body}
}

func discordNotFound(what string, code int) discordRESTReply {
	return discordReply(http.StatusNotFound, discordError{Message: "Unknown " + what, Code: code})
}

func (d *Discord) serveREST(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c := DiscordCall{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, "/api/v9/"), Body: body,
		At: d.Now(), Authorization: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type")}
	d.wait(c)
	var rep discordRESTReply
	recorded := false
	switch f := d.takeFault(c); {
	case f != nil:
		secs := f.retryAfter.Seconds()
		w.Header().Set("Retry-After", fmt.Sprint(int(secs+0.999)))
		rep = discordReply(http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.",
			"retry_after": secs, "global": false})
	case c.Authorization != "Bot "+d.Token && !strings.HasPrefix(c.Path, "interactions/") &&
		!strings.HasPrefix(c.Path, "webhooks/"):
		rep = discordReply(http.StatusUnauthorized, discordError{Message: "401: Unauthorized"})
	default:
		// Routed and recorded at once: a test that sees the call's effect
		// (a command registered, a message posted) sees the call too.
		d.mu.Lock()
		rep = d.route(c)
		d.record(c, rep)
		d.mu.Unlock()
		recorded = true
	}
	if !recorded {
		d.mu.Lock()
		d.record(c, rep)
		d.mu.Unlock()
	}
	if rep.after != nil {
		rep.after()
	}
	if rep.body == nil {
		w.WriteHeader(rep.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	_ = json.NewEncoder(w).Encode(rep.body)
}

// record keeps call c with its answer; d.mu is held.
func (d *Discord) record(c DiscordCall, rep discordRESTReply) {
	c.Status, c.Message = rep.status, rep.message
	d.calls = append(d.calls, c)
	d.notify()
}

// route answers one call; d.mu is held.
func (d *Discord) route(c DiscordCall) discordRESTReply {
	seg := strings.Split(c.Path, "/")
	switch {
	case c.Is("GET", "gateway"), c.Is("GET", "gateway/bot"):
		return discordReply(http.StatusOK, map[string]any{"url": d.gatewayURL(),
			"shards": 1, "session_start_limit": map[string]int{"total": 1000, "remaining": 1000, "max_concurrency": 1}})
	case c.Is("GET", "users/@me"):
		return discordReply(http.StatusOK, d.botUser())
	case c.Is("PUT", "applications/*/commands"), c.Is("PUT", "applications/*/guilds/*/commands"):
		return d.overwriteCommands(c)
	case c.Is("POST", "interactions/*/*/callback"):
		return d.callback(seg[1], seg[2], c)
	case c.Is("PATCH", "webhooks/*/*/messages/*"):
		return d.webhookEdit(seg[1], seg[2], seg[4], c)
	case c.Is("DELETE", "webhooks/*/*/messages/*"):
		return d.webhookDelete(seg[1], seg[2], seg[4])
	case c.Is("POST", "webhooks/*/*"):
		return d.followup(seg[1], seg[2], c)
	case c.Is("GET", "guilds/*/members/*"):
		return d.member(seg[1], seg[3])
	case c.Is("GET", "channels/*"):
		if ch, ok := d.channels[seg[1]]; ok {
			return discordReply(http.StatusOK, ch)
		}
		return discordNotFound("Channel", 10003)
	case c.Is("PATCH", "channels/*"):
		return d.renameChannel(seg[1], c)
	case c.Is("POST", "channels/*/threads"):
		return d.startThread(seg[1], c)
	case c.Is("POST", "channels/*/typing"):
		if _, ok := d.channels[seg[1]]; !ok {
			return discordNotFound("Channel", 10003)
		}
		return discordReply(http.StatusNoContent, nil)
	case c.Is("POST", "channels/*/messages"):
		return d.postMessage(seg[1], c)
	case c.Is("PATCH", "channels/*/messages/*"):
		return d.editMessage(seg[1], seg[3], c)
	case c.Is("PUT", "channels/*/messages/*/reactions/*/@me"), c.Is("DELETE", "channels/*/messages/*/reactions/*/@me"):
		return d.react(seg[1], seg[3], seg[5], c.Method == "PUT")
	}
	return discordReply(http.StatusNotFound, discordError{Message: "404: Not Found"})
}

// react adds or removes the bot's reaction emoji on a message; d.mu is
// held.
func (d *Discord) react(channel, id, emoji string, add bool) discordRESTReply {
	m, ok := d.messages[id]
	if !ok || m.ChannelID != channel {
		return discordNotFound("Message", 10008)
	}
	m.Reactions = keep(m.Reactions, func(e string) bool { return e != emoji })
	if add {
		m.Reactions = append(m.Reactions, emoji)
	}
	d.notify()
	return discordReply(http.StatusNoContent, nil)
}

func (d *Discord) botUser() map[string]any {
	return map[string]any{"id": d.BotID, "username": "jake-bot", "bot": true}
}

func (d *Discord) overwriteCommands(c DiscordCall) discordRESTReply {
	var cmds []map[string]any
	if err := json.Unmarshal(c.Body, &cmds); err != nil {
		return discordReply(http.StatusBadRequest, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	d.commands = nil
	for _, cmd := range cmds {
		cmd["id"], cmd["application_id"], cmd["version"] = d.newID(), d.AppID, "1"
		raw, _ := json.Marshal(cmd)
		d.commands = append(d.commands, raw)
	}
	return discordReply(http.StatusOK, cmds)
}

// discordMessageBody is the part of a message payload the fake keeps.
type discordMessageBody struct {
	Content    *string          `json:"content"`
	Embeds     *[]DiscordEmbed  `json:"embeds"`
	Components *json.RawMessage `json:"components"`
	Flags      int              `json:"flags"`
}

func (d *Discord) postMessage(channel string, c DiscordCall) discordRESTReply {
	if _, ok := d.channels[channel]; !ok {
		return discordNotFound("Channel", 10003)
	}
	body, files, err := messageBody(c)
	var b discordMessageBody
	if err == nil {
		err = json.Unmarshal(body, &b)
	}
	if err != nil {
		return discordReply(http.StatusBadRequest, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	m := d.addMessage(channel, d.BotID, "")
	m.Files = files
	if status := d.apply(m, b); status != 0 {
		return discordReply(status, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	d.echo(m)
	return d.messageReply(m)
}

func (d *Discord) editMessage(channel, id string, c DiscordCall) discordRESTReply {
	m, ok := d.messages[id]
	if !ok || m.ChannelID != channel || m.Deleted {
		return discordNotFound("Message", 10008)
	}
	var b discordMessageBody
	if err := json.Unmarshal(c.Body, &b); err != nil {
		return discordReply(http.StatusBadRequest, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	if status := d.apply(m, b); status != 0 {
		return discordReply(status, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	m.Edits++
	return d.messageReply(m)
}

func (d *Discord) messageReply(m *DiscordMessage) discordRESTReply {
	return discordRESTReply{status: http.StatusOK, body: d.messageJSON(m), message: m.ID}
}

func (d *Discord) addMessage(channel, author, interaction string) *DiscordMessage {
	m := &DiscordMessage{ID: d.newID(), ChannelID: channel, AuthorID: author, Interaction: interaction}
	d.messages[m.ID] = m
	d.order = append(d.order, m.ID)
	return m
}

// apply updates m with the fields b has, as Discord does, and enforces
// Discord's limits: it returns 400 for content over 2000 characters or a
// message with neither content nor embeds.
func (d *Discord) apply(m *DiscordMessage, b discordMessageBody) int {
	next := *m
	if b.Content != nil {
		next.Content = *b.Content
	}
	if b.Embeds != nil {
		next.Embeds = *b.Embeds
	}
	if b.Components != nil {
		next.Components = *b.Components
	}
	if b.Flags != 0 {
		next.Flags = b.Flags
	}
	if len([]rune(next.Content)) > 2000 || (next.Content == "" && len(next.Embeds) == 0 && len(next.Files) == 0) {
		return http.StatusBadRequest
	}
	*m = next
	return 0
}

func (d *Discord) messageJSON(m *DiscordMessage) map[string]any {
	out := map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0,
		"author": map[string]any{"id": m.AuthorID, "username": "jake-bot", "bot": m.AuthorID == d.BotID},
		"embeds": m.Embeds, "flags": m.Flags, "timestamp": time.Unix(0, 0).UTC().Format(time.RFC3339)}
	if ch := d.channels[m.ChannelID]; ch != nil && ch.GuildID != "" {
		out["guild_id"] = ch.GuildID
	}
	if m.Components != nil {
		out["components"] = m.Components
	}
	return out
}

// echo dispatches the bot's own new message back to it, as Discord does.
func (d *Discord) echo(m *DiscordMessage) {
	data := d.messageJSON(m)
	go d.Dispatch("MESSAGE_CREATE", data)
}

func (d *Discord) renameChannel(id string, c DiscordCall) discordRESTReply {
	ch, ok := d.channels[id]
	if !ok {
		return discordNotFound("Channel", 10003)
	}
	var b struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(c.Body, &b); err != nil || len([]rune(b.Name)) > 100 {
		return discordReply(http.StatusBadRequest, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	if b.Name != "" {
		ch.Name = b.Name
	}
	return discordReply(http.StatusOK, ch)
}

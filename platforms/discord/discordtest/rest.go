package discordtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/platforms/internal/fakeserver"
)

// apiError is Discord's JSON error body.
type apiError struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
}

type restReply struct {
	status  int
	body    any
	message string // the message created or edited
	// after runs once the call is routed and recorded, with no lock held,
	// before the call is answered: the gateway events the call causes.
	after func()
}

func replyWith(status int, body any) restReply {
	return restReply{status: status, body: body}
}

func notFound(what string, code int) restReply {
	return replyWith(http.StatusNotFound, apiError{Message: "Unknown " + what, Code: code})
}

func (d *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c := Call{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, "/api/v9/"), Body: body,
		At: d.Now(), Authorization: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type")}
	d.wait(c)
	var rep restReply
	recorded := false
	switch f := d.takeFault(c); {
	case f != nil:
		secs := f.retryAfter.Seconds()
		w.Header().Set("Retry-After", fmt.Sprint(int(secs+0.999)))
		rep = replyWith(http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.",
			"retry_after": secs, "global": false})
	case c.Authorization != "Bot "+d.Token && !strings.HasPrefix(c.Path, "interactions/") &&
		!strings.HasPrefix(c.Path, "webhooks/"):
		rep = replyWith(http.StatusUnauthorized, apiError{Message: "401: Unauthorized"})
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
func (d *Server) record(c Call, rep restReply) {
	c.Status, c.Message = rep.status, rep.message
	d.calls = append(d.calls, c)
	d.notify()
}

// route answers one call; d.mu is held.
func (d *Server) route(c Call) restReply {
	seg := strings.Split(c.Path, "/")
	switch {
	case c.Is("GET", "gateway"), c.Is("GET", "gateway/bot"):
		return replyWith(http.StatusOK, map[string]any{"url": d.gatewayURL(),
			"shards": 1, "session_start_limit": map[string]int{"total": 1000, "remaining": 1000, "max_concurrency": 1}})
	case c.Is("GET", "users/@me"):
		return replyWith(http.StatusOK, d.botUser())
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
			return replyWith(http.StatusOK, ch)
		}
		return notFound("Channel", 10003)
	case c.Is("PATCH", "channels/*"):
		return d.renameChannel(seg[1], c)
	case c.Is("POST", "channels/*/threads"):
		return d.startThread(seg[1], c)
	case c.Is("POST", "channels/*/typing"):
		if _, ok := d.channels[seg[1]]; !ok {
			return notFound("Channel", 10003)
		}
		return replyWith(http.StatusNoContent, nil)
	case c.Is("POST", "channels/*/messages"):
		return d.postMessage(seg[1], c)
	case c.Is("PATCH", "channels/*/messages/*"):
		return d.editMessage(seg[1], seg[3], c)
	case c.Is("PUT", "channels/*/messages/*/reactions/*/@me"), c.Is("DELETE", "channels/*/messages/*/reactions/*/@me"):
		return d.react(seg[1], seg[3], seg[5], c.Method == "PUT")
	}
	return replyWith(http.StatusNotFound, apiError{Message: "404: Not Found"})
}

// react adds or removes the bot's reaction emoji on a message; d.mu is
// held.
func (d *Server) react(channel, id, emoji string, add bool) restReply {
	m, ok := d.messages[id]
	if !ok || m.ChannelID != channel {
		return notFound("Message", 10008)
	}
	m.Reactions = fakeserver.Keep(m.Reactions, func(e string) bool { return e != emoji })
	if add {
		m.Reactions = append(m.Reactions, emoji)
	}
	d.notify()
	return replyWith(http.StatusNoContent, nil)
}

func (d *Server) botUser() map[string]any {
	return map[string]any{"id": d.BotID, "username": "jake-bot", "bot": true}
}

func (d *Server) overwriteCommands(c Call) restReply {
	var cmds []map[string]any
	if err := json.Unmarshal(c.Body, &cmds); err != nil {
		return replyWith(http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	d.commands = nil
	for _, cmd := range cmds {
		cmd["id"], cmd["application_id"], cmd["version"] = d.newID(), d.AppID, "1"
		raw, _ := json.Marshal(cmd)
		d.commands = append(d.commands, raw)
	}
	return replyWith(http.StatusOK, cmds)
}

// messageFields is the part of a message payload the fake keeps.
type messageFields struct {
	Content    *string          `json:"content"`
	Embeds     *[]Embed         `json:"embeds"`
	Components *json.RawMessage `json:"components"`
	Flags      int              `json:"flags"`
}

func (d *Server) postMessage(channel string, c Call) restReply {
	if _, ok := d.channels[channel]; !ok {
		return notFound("Channel", 10003)
	}
	body, files, err := messageBody(c)
	var b messageFields
	if err == nil {
		err = json.Unmarshal(body, &b)
	}
	if err != nil {
		return replyWith(http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	m := d.addMessage(channel, d.BotID, "")
	m.Files = files
	if status := d.apply(m, b); status != 0 {
		return replyWith(status, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	d.echo(m)
	return d.messageReply(m)
}

func (d *Server) editMessage(channel, id string, c Call) restReply {
	m, ok := d.messages[id]
	if !ok || m.ChannelID != channel || m.Deleted {
		return notFound("Message", 10008)
	}
	var b messageFields
	if err := json.Unmarshal(c.Body, &b); err != nil {
		return replyWith(http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	if status := d.apply(m, b); status != 0 {
		return replyWith(status, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	m.Edits++
	return d.messageReply(m)
}

func (d *Server) messageReply(m *Message) restReply {
	return restReply{status: http.StatusOK, body: d.messageJSON(m), message: m.ID}
}

func (d *Server) addMessage(channel, author, interaction string) *Message {
	m := &Message{ID: d.newID(), ChannelID: channel, AuthorID: author, Interaction: interaction}
	d.messages[m.ID] = m
	d.order = append(d.order, m.ID)
	return m
}

// apply updates m with the fields b has, as Discord does, and enforces
// Discord's limits: it returns 400 for content over 2000 characters or a
// message with neither content nor embeds.
func (d *Server) apply(m *Message, b messageFields) int {
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

func (d *Server) messageJSON(m *Message) map[string]any {
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
func (d *Server) echo(m *Message) {
	data := d.messageJSON(m)
	go d.Dispatch("MESSAGE_CREATE", data)
}

func (d *Server) renameChannel(id string, c Call) restReply {
	ch, ok := d.channels[id]
	if !ok {
		return notFound("Channel", 10003)
	}
	var b struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(c.Body, &b); err != nil || len([]rune(b.Name)) > 100 {
		return replyWith(http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	if b.Name != "" {
		ch.Name = b.Name
	}
	return replyWith(http.StatusOK, ch)
}

package platformtest

import (
	"encoding/json"
	"net/http"
)

// DiscordResponse is an interaction callback as the fake received it.
type DiscordResponse struct {
	Type int `json:"type"`
	Data struct {
		Content string            `json:"content"`
		Flags   int               `json:"flags"`
		Choices []json.RawMessage `json:"choices"`
	} `json:"data"`
}

// DiscordEphemeral is Discord's flag for a message only its recipient sees.
const DiscordEphemeral = 1 << 6

func (d *Discord) interaction(app, token string) *discordInteractionState {
	if app != d.AppID {
		return nil
	}
	return d.interactions[token]
}

func (d *Discord) callback(id, token string, c DiscordCall) discordRESTReply {
	in := d.interactions[token]
	if in == nil || in.id != id {
		return discordNotFound("interaction", 10062)
	}
	if in.response != 0 {
		return discordReply(http.StatusBadRequest, discordError{Message: "Interaction has already been acknowledged.", Code: 40060})
	}
	var r struct {
		Type int `json:"type"`
		Data *struct {
			discordMessageBody
		} `json:"data"`
	}
	if err := json.Unmarshal(c.Body, &r); err != nil || r.Type == 0 {
		return discordReply(http.StatusBadRequest, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	in.response = r.Type
	in.callback = c.Body
	if r.Data != nil {
		in.ephemeral = r.Data.Flags&DiscordEphemeral != 0
		if r.Type == 4 {
			m := d.addMessage(in.channel, d.BotID, in.id)
			d.apply(m, r.Data.discordMessageBody)
			in.original = m.ID
		}
	}
	return discordReply(http.StatusNoContent, nil)
}

func (d *Discord) webhookEdit(app, token, id string, c DiscordCall) discordRESTReply {
	in := d.interaction(app, token)
	if in == nil {
		return discordNotFound("Webhook", 10015)
	}
	var b discordMessageBody
	if err := json.Unmarshal(c.Body, &b); err != nil {
		return discordReply(http.StatusBadRequest, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	if id == "@original" {
		if in.response == 0 || in.response == 8 {
			return discordNotFound("Message", 10008)
		}
		if in.original == "" {
			// The first edit of a deferred response is the response.
			m := &DiscordMessage{ChannelID: in.channel, AuthorID: d.BotID, Interaction: in.id}
			if in.ephemeral {
				m.Flags = DiscordEphemeral
			}
			if status := d.apply(m, b); status != 0 {
				return discordReply(status, discordError{Message: "Invalid Form Body", Code: 50035})
			}
			added := d.addMessage(in.channel, d.BotID, in.id)
			m.ID = added.ID
			*added = *m
			in.original = m.ID
			return d.messageReply(added)
		}
		id = in.original
	}
	m, ok := d.messages[id]
	if !ok || m.Interaction != in.id || m.Deleted {
		return discordNotFound("Message", 10008)
	}
	if status := d.apply(m, b); status != 0 {
		return discordReply(status, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	m.Edits++
	return d.messageReply(m)
}

func (d *Discord) webhookDelete(app, token, id string) discordRESTReply {
	in := d.interaction(app, token)
	if in == nil {
		return discordNotFound("Webhook", 10015)
	}
	if id == "@original" {
		if in.response == 0 {
			return discordNotFound("Message", 10008)
		}
		id = in.original
		if id == "" {
			// The deferred placeholder goes away.
			in.original = "deleted"
			return discordReply(http.StatusNoContent, nil)
		}
	}
	m, ok := d.messages[id]
	if !ok || m.Interaction != in.id {
		return discordNotFound("Message", 10008)
	}
	m.Deleted = true
	return discordReply(http.StatusNoContent, nil)
}

func (d *Discord) followup(app, token string, c DiscordCall) discordRESTReply {
	in := d.interaction(app, token)
	if in == nil {
		return discordNotFound("Webhook", 10015)
	}
	if in.response == 0 {
		return discordReply(http.StatusBadRequest, discordError{Message: "Interaction has not been acknowledged.", Code: 40060})
	}
	var b discordMessageBody
	if err := json.Unmarshal(c.Body, &b); err != nil {
		return discordReply(http.StatusBadRequest, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	m := d.addMessage(in.channel, d.BotID, in.id)
	if status := d.apply(m, b); status != 0 {
		return discordReply(status, discordError{Message: "Invalid Form Body", Code: 50035})
	}
	return d.messageReply(m)
}

// Callback returns the interaction's callback (its first answer) as the
// fake received it.
func (d *Discord) Callback(in DiscordInteraction) (DiscordResponse, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fi := d.interactions[in.Token]
	if fi == nil || fi.callback == nil {
		return DiscordResponse{}, false
	}
	var r DiscordResponse
	_ = json.Unmarshal(fi.callback, &r)
	return r, true
}

// Response returns the message that completed the interaction's
// response, once there is one (and it was not deleted).
func (d *Discord) Response(in DiscordInteraction) (DiscordMessage, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fi := d.interactions[in.Token]
	if fi == nil {
		return DiscordMessage{}, false
	}
	m, ok := d.messages[fi.original]
	if !ok || m.Deleted {
		return DiscordMessage{}, false
	}
	return *m, true
}

// Followups returns the interaction's followup messages.
func (d *Discord) Followups(in DiscordInteraction) []DiscordMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	fi := d.interactions[in.Token]
	var out []DiscordMessage
	for _, id := range d.order {
		if m := d.messages[id]; fi != nil && m.Interaction == fi.id && id != fi.original {
			out = append(out, *m)
		}
	}
	return out
}

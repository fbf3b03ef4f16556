package discordtest

import (
	"encoding/json"
	"net/http"
)

// Response is an interaction callback as the fake received it.
type Response struct {
	Type int `json:"type"`
	Data struct {
		Content string            `json:"content"`
		Flags   int               `json:"flags"`
		Choices []json.RawMessage `json:"choices"`
	} `json:"data"`
}

// Ephemeral is Discord's flag for a message only its recipient sees.
const Ephemeral = 1 << 6

func (d *Server) interaction(app, token string) *interactionState {
	if app != d.AppID {
		return nil
	}
	return d.interactions[token]
}

func (d *Server) callback(id, token string, c Call) restReply {
	in := d.interactions[token]
	if in == nil || in.id != id {
		return notFound("interaction", 10062)
	}
	if in.response != 0 {
		return replyWith(http.StatusBadRequest, apiError{Message: "Interaction has already been acknowledged.", Code: 40060})
	}
	var r struct {
		Type int `json:"type"`
		Data *struct {
			messageFields
		} `json:"data"`
	}
	if err := json.Unmarshal(c.Body, &r); err != nil || r.Type == 0 {
		return replyWith(http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	in.response = r.Type
	in.callback = c.Body
	if r.Data != nil {
		in.ephemeral = r.Data.Flags&Ephemeral != 0
		if r.Type == 4 {
			m := d.addMessage(in.channel, d.BotID, in.id)
			d.apply(m, r.Data.messageFields)
			in.original = m.ID
		}
	}
	return replyWith(http.StatusNoContent, nil)
}

func (d *Server) webhookEdit(app, token, id string, c Call) restReply {
	in := d.interaction(app, token)
	if in == nil {
		return notFound("Webhook", 10015)
	}
	var b messageFields
	if err := json.Unmarshal(c.Body, &b); err != nil {
		return replyWith(http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	if id == "@original" {
		if in.response == 0 || in.response == 8 {
			return notFound("Message", 10008)
		}
		if in.original == "" {
			// The first edit of a deferred response is the response.
			m := &Message{ChannelID: in.channel, AuthorID: d.BotID, Interaction: in.id}
			if in.ephemeral {
				m.Flags = Ephemeral
			}
			if status := d.apply(m, b); status != 0 {
				return replyWith(status, apiError{Message: "Invalid Form Body", Code: 50035})
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
		return notFound("Message", 10008)
	}
	if status := d.apply(m, b); status != 0 {
		return replyWith(status, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	m.Edits++
	return d.messageReply(m)
}

func (d *Server) webhookDelete(app, token, id string) restReply {
	in := d.interaction(app, token)
	if in == nil {
		return notFound("Webhook", 10015)
	}
	if id == "@original" {
		if in.response == 0 {
			return notFound("Message", 10008)
		}
		id = in.original
		if id == "" {
			// The deferred placeholder goes away.
			in.original = "deleted"
			return replyWith(http.StatusNoContent, nil)
		}
	}
	m, ok := d.messages[id]
	if !ok || m.Interaction != in.id {
		return notFound("Message", 10008)
	}
	m.Deleted = true
	return replyWith(http.StatusNoContent, nil)
}

func (d *Server) followup(app, token string, c Call) restReply {
	in := d.interaction(app, token)
	if in == nil {
		return notFound("Webhook", 10015)
	}
	if in.response == 0 {
		return replyWith(http.StatusBadRequest, apiError{Message: "Interaction has not been acknowledged.", Code: 40060})
	}
	var b messageFields
	if err := json.Unmarshal(c.Body, &b); err != nil {
		return replyWith(http.StatusBadRequest, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	m := d.addMessage(in.channel, d.BotID, in.id)
	if status := d.apply(m, b); status != 0 {
		return replyWith(status, apiError{Message: "Invalid Form Body", Code: 50035})
	}
	return d.messageReply(m)
}

// Callback returns the interaction's callback (its first answer) as the
// fake received it.
func (d *Server) Callback(in Interaction) (Response, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fi := d.interactions[in.Token]
	if fi == nil || fi.callback == nil {
		return Response{}, false
	}
	var r Response
	_ = json.Unmarshal(fi.callback, &r)
	return r, true
}

// Response returns the message that completed the interaction's
// response, once there is one (and it was not deleted).
func (d *Server) Response(in Interaction) (Message, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fi := d.interactions[in.Token]
	if fi == nil {
		return Message{}, false
	}
	m, ok := d.messages[fi.original]
	if !ok || m.Deleted {
		return Message{}, false
	}
	return *m, true
}

// Followups returns the interaction's followup messages.
func (d *Server) Followups(in Interaction) []Message {
	d.mu.Lock()
	defer d.mu.Unlock()
	fi := d.interactions[in.Token]
	var out []Message
	for _, id := range d.order {
		if m := d.messages[id]; fi != nil && m.Interaction == fi.id && id != fi.original {
			out = append(out, *m)
		}
	}
	return out
}

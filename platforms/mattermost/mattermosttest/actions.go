package mattermosttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// integration is a button's action as the server keeps it.
type integration struct {
	id, url string
	context map[string]any
}

// integrations returns the buttons of a post's props with their
// integrations.
func integrations(props map[string]any) []integration {
	b, _ := json.Marshal(props)
	var p struct {
		Attachments []struct {
			Actions []struct {
				ID          string `json:"id"`
				Integration struct {
					URL     string         `json:"url"`
					Context map[string]any `json:"context"`
				} `json:"integration"`
			} `json:"actions"`
		} `json:"attachments"`
	}
	_ = json.Unmarshal(b, &p)
	var out []integration
	for _, a := range p.Attachments {
		for _, act := range a.Actions {
			out = append(out, integration{act.ID, act.Integration.URL, act.Integration.Context})
		}
	}
	return out
}

// PressResponse is what the bot answered a press with
// (PostActionIntegrationResponse).
type PressResponse struct {
	Status        int
	EphemeralText string `json:"ephemeral_text"`
	Update        *struct {
		Message string         `json:"message"`
		Props   map[string]any `json:"props"`
	} `json:"update"`
}

// Press presses button action on post id as u, as the server does when a
// client asks it to (POST /api/v4/posts/{id}/actions/{action}): it posts
// the button's context to its integration URL with who pressed where,
// applies the answer's update to the post and shows its ephemeral text to
// u.
func (s *Server) Press(t testing.TB, u User, id, action string) PressResponse {
	t.Helper()
	s.mu.Lock()
	p, ok := s.posts[id]
	var found *integration
	if ok {
		for _, in := range integrations(p.Props) {
			if in.id == action {
				found = &in
			}
		}
	}
	var req []byte
	if found != nil {
		req, _ = json.Marshal(map[string]any{"user_id": u.ID, "user_name": u.Username, "channel_id": p.ChannelID,
			"channel_name": s.channels[p.ChannelID].name, "team_id": "tfakefakefakefakefakefake1", "team_domain": "fake",
			"post_id": id, "trigger_id": "trigger" + s.nextID('t'), "type": "", "data_source": "", "context": found.context})
	}
	s.mu.Unlock()
	if found == nil {
		t.Fatalf("fake mattermost: post %s has no button %s", id, action)
	}
	resp, err := s.actions.Post(found.url, "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatalf("fake mattermost: press %s: %v", action, err)
	}
	defer resp.Body.Close()
	out := PressResponse{Status: resp.StatusCode}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &out); err != nil {
			t.Errorf("fake mattermost: the press's answer %q: %v", body, err)
		}
	}
	s.update(func() {
		if out.Update != nil {
			if out.Update.Message != "" {
				p.Message = out.Update.Message
			}
			if out.Update.Props != nil {
				p.Props = out.Update.Props
			}
		}
		if out.EphemeralText != "" {
			s.ephemeral = append(s.ephemeral, Ephemeral{User: u.ID, Channel: p.ChannelID, Text: out.EphemeralText})
		}
	})
	return out
}

// ActionURL returns the integration URL of button action on post id, as
// the server keeps it (no client sees it).
func (s *Server) ActionURL(id, action string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.posts[id]; ok {
		for _, in := range integrations(p.Props) {
			if in.id == action {
				return in.url
			}
		}
	}
	return ""
}

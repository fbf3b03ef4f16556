package mattermosttest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"
)

// postJSON is a post as the API writes it.
func (s *Server) postJSON(p *Post) map[string]any {
	out := map[string]any{"id": p.ID, "channel_id": p.ChannelID, "root_id": p.RootID, "user_id": p.UserID,
		"message": p.Message, "type": "", "props": stripIntegrations(p.Props), "create_at": 1700000000000}
	if len(p.FileIDs) > 0 {
		out["file_ids"] = p.FileIDs
		var infos []map[string]any
		for _, id := range p.FileIDs {
			infos = append(infos, fileJSON(s.files[id]))
		}
		out["metadata"] = map[string]any{"files": infos}
	}
	return out
}

// stripIntegrations removes the buttons' integrations, as the server
// does before a post leaves it: no client sees a button's context.
func stripIntegrations(props map[string]any) map[string]any {
	b, _ := json.Marshal(props)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	atts, _ := out["attachments"].([]any)
	for _, a := range atts {
		m, _ := a.(map[string]any)
		acts, _ := m["actions"].([]any)
		for _, act := range acts {
			if am, ok := act.(map[string]any); ok {
				delete(am, "integration")
			}
		}
	}
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// newPost stores p, given an id, and sends the posted event; s.mu is
// held.
func (s *Server) newPost(p *Post) {
	p.ID = s.nextID('p')
	s.posts[p.ID] = p
	s.order = append(s.order, p.ID)
	for _, id := range p.FileIDs {
		s.files[id].Post = p.ID
	}
	ch := s.channels[p.ChannelID]
	post, _ := json.Marshal(s.postJSON(p))
	s.broadcastLocked("posted", map[string]any{"channel_type": ch.typ, "channel_name": ch.name, "channel_display_name": ch.name,
		"sender_name": "@" + s.users[p.UserID].Username, "team_id": "tfakefakefakefakefakefake1", "post": string(post)}, p.ChannelID)
}

var actionIDRE = regexp.MustCompile(`^[A-Za-z0-9]+$`)

// checkPost applies the server's rules to a post the bot makes: a
// channel, a root post of that channel, a message within the limit,
// files of its own not yet posted, buttons with ids of letters and
// digits and an integration URL. s.mu is held.
func (s *Server) checkPost(in *Post) (int, any) {
	if _, ok := s.channels[in.ChannelID]; !ok || !idRE.MatchString(in.ChannelID) {
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	}
	if in.RootID != "" {
		root, ok := s.posts[in.RootID]
		if !ok || root.ChannelID != in.ChannelID || root.RootID != "" {
			return appError(http.StatusBadRequest, "api.post.create_post.root_id.app_error", "Invalid RootId parameter.")
		}
	}
	if utf8.RuneCountInString(in.Message) > s.maxRunes {
		return appError(http.StatusBadRequest, "model.post.is_valid.message_length.app_error", "Message length exceeds the maximum.")
	}
	for _, id := range in.FileIDs {
		f, ok := s.files[id]
		if !ok || f.Post != "" || f.Channel != in.ChannelID || f.User != s.Bot.ID {
			return appError(http.StatusBadRequest, "api.post.create_post.file_ids.app_error", "Invalid file_ids.")
		}
	}
	for _, b := range integrations(in.Props) {
		if !actionIDRE.MatchString(b.id) || b.url == "" {
			return appError(http.StatusBadRequest, "model.post.is_valid.action_id.app_error", "Invalid action.")
		}
	}
	return 0, nil
}

func (s *Server) createPost(r *http.Request, c *Call) (int, any) {
	var in struct {
		ChannelID string         `json:"channel_id"`
		RootID    string         `json:"root_id"`
		Message   string         `json:"message"`
		Props     map[string]any `json:"props"`
		FileIDs   []string       `json:"file_ids"`
	}
	if !decode(r, &in) {
		return appError(http.StatusBadRequest, "api.context.invalid_body_param.app_error", "Invalid or missing post in request body.")
	}
	p := &Post{ChannelID: in.ChannelID, RootID: in.RootID, UserID: s.Bot.ID, Message: in.Message, Props: in.Props, FileIDs: in.FileIDs}
	if status, err := s.checkPost(p); status != 0 {
		return status, err
	}
	s.newPost(p)
	return http.StatusCreated, s.postJSON(p)
}

func (s *Server) patchPost(r *http.Request, c *Call) (int, any) {
	id := r.PathValue("post_id")
	if !idRE.MatchString(id) {
		return badID("post_id")
	}
	var in struct {
		Message *string         `json:"message"`
		Props   *map[string]any `json:"props"`
	}
	if !decode(r, &in) {
		return appError(http.StatusBadRequest, "api.context.invalid_body_param.app_error", "Invalid or missing patch in request body.")
	}
	p, ok := s.posts[id]
	switch {
	case !ok:
		return appError(http.StatusNotFound, "app.post.get.app_error", "Unable to get the post.")
	case p.UserID != s.Bot.ID:
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	case in.Message != nil && utf8.RuneCountInString(*in.Message) > s.maxRunes:
		return appError(http.StatusBadRequest, "model.post.is_valid.message_length.app_error", "Message length exceeds the maximum.")
	}
	if in.Message != nil {
		p.Message = *in.Message
	}
	if in.Props != nil {
		p.Props = *in.Props // a patch's props replace them all
	}
	p.Edits++
	p.EditTimes = append(p.EditTimes, s.clock())
	post, _ := json.Marshal(s.postJSON(p))
	s.broadcastLocked("post_edited", map[string]any{"post": string(post)}, p.ChannelID)
	return http.StatusOK, s.postJSON(p)
}

var emojiRE = regexp.MustCompile(`^[a-z0-9_+-]{1,64}$`)

func (s *Server) addReaction(r *http.Request, c *Call) (int, any) {
	var in struct {
		UserID    string `json:"user_id"`
		PostID    string `json:"post_id"`
		EmojiName string `json:"emoji_name"`
	}
	if !decode(r, &in) {
		return appError(http.StatusBadRequest, "api.context.invalid_body_param.app_error", "Invalid or missing reaction in request body.")
	}
	switch {
	case in.UserID != s.Bot.ID:
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	case !emojiRE.MatchString(in.EmojiName):
		return appError(http.StatusBadRequest, "model.reaction.is_valid.emoji_name.app_error", "Invalid emoji name.")
	}
	if _, ok := s.posts[in.PostID]; !ok {
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	}
	s.reactLocked(in.UserID, in.PostID, in.EmojiName)
	return http.StatusOK, map[string]any{"user_id": in.UserID, "post_id": in.PostID, "emoji_name": in.EmojiName}
}

// reactLocked adds a reaction once, and sends reaction_added; s.mu is
// held.
func (s *Server) reactLocked(user, postID, emoji string) {
	p := s.posts[postID]
	r := Reaction{User: user, Emoji: emoji}
	if slices.Contains(p.Reactions, r) {
		return
	}
	p.Reactions = append(p.Reactions, r)
	data, _ := json.Marshal(map[string]any{"user_id": user, "post_id": postID, "emoji_name": emoji, "create_at": 1700000000000})
	s.broadcastLocked("reaction_added", map[string]any{"reaction": string(data)}, p.ChannelID)
}

func (s *Server) deleteReaction(r *http.Request, c *Call) (int, any) {
	user, id, emoji := r.PathValue("user_id"), r.PathValue("post_id"), r.PathValue("emoji")
	if user == "me" { // the session's user, as everywhere in the API
		user = s.Bot.ID
	}
	switch {
	case !idRE.MatchString(user):
		return badID("user_id")
	case !idRE.MatchString(id):
		return badID("post_id")
	case user != s.Bot.ID:
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	}
	p, ok := s.posts[id]
	if !ok {
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	}
	p.Reactions = slices.DeleteFunc(p.Reactions, func(r Reaction) bool { return r == Reaction{user, emoji} })
	return http.StatusOK, map[string]string{"status": "OK"}
}

func (s *Server) typing(r *http.Request, c *Call) (int, any) {
	var in struct {
		ChannelID string `json:"channel_id"`
		ParentID  string `json:"parent_id"`
	}
	switch {
	case !decode(r, &in):
		return appError(http.StatusBadRequest, "api.context.invalid_body_param.app_error", "Invalid or missing typing in request body.")
	case r.PathValue("user_id") != s.Bot.ID && r.PathValue("user_id") != "me":
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	}
	if _, ok := s.channels[in.ChannelID]; !ok {
		return appError(http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	}
	return http.StatusOK, map[string]string{"status": "OK"}
}

// Say posts text as u in channel, in root's thread (root "" for the top
// of the channel), with the files (uploaded with Upload), and returns the
// post.
func (s *Server) Say(t testing.TB, u User, channel, root, text string, files ...string) Post {
	t.Helper()
	var out Post
	s.update(func() {
		if _, ok := s.channels[channel]; !ok {
			t.Fatalf("fake mattermost: no channel %s", channel)
		}
		if root != "" {
			if r, ok := s.posts[root]; !ok || r.RootID != "" {
				t.Fatalf("fake mattermost: %s is not a root post", root)
			}
		}
		p := &Post{ChannelID: channel, RootID: root, UserID: u.ID, Message: text, FileIDs: files}
		s.newPost(p)
		out = clonePost(p)
	})
	return out
}

// React adds u's reaction emoji on post id.
func (s *Server) React(t testing.TB, u User, id, emoji string) {
	t.Helper()
	s.update(func() {
		if _, ok := s.posts[id]; !ok {
			t.Fatalf("fake mattermost: no post %s", id)
		}
		s.reactLocked(u.ID, id, emoji)
	})
}

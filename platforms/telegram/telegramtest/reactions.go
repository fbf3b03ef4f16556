package telegramtest

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
)

// Reactions are the emoji a bot may react with: Telegram refuses
// any other with REACTION_INVALID (no ✅ ❌ ⏳ 🛑 🔁 among them).
var Reactions = []string{"👍", "👎", "❤", "🔥", "🥰", "👏", "😁", "🤔", "🤯", "😱", "🤬", "😢", "🎉", "🤩",
	"🤮", "💩", "🙏", "👌", "🕊", "🤡", "🥱", "🥴", "😍", "🐳", "❤‍🔥", "🌚", "🌭", "💯", "🤣", "⚡", "🍌", "🏆", "💔",
	"🤨", "😐", "🍓", "🍾", "💋", "🖕", "😈", "😴", "😭", "🤓", "👻", "👨‍💻", "👀", "🎃", "🙈", "😇", "😨", "🤝", "✍",
	"🤗", "🫡", "🎅", "🎄", "☃", "💅", "🤪", "🗿", "🆒", "💘", "🙉", "🦄", "😘", "💊", "🙊", "😎", "👾", "🤷‍♂", "🤷",
	"🤷‍♀", "😡"}

// setMessageReaction replaces the bot's reaction on a message, as
// Telegram does: one emoji of its list, or none; s.mu is held.
func (s *Server) setMessageReaction(chat int64, p url.Values) (any, *Failure) {
	if _, ok := s.chats[chat]; !ok {
		return nil, failure(400, "Bad Request: chat not found")
	}
	id, err := strconv.Atoi(p.Get("message_id"))
	if err != nil || id <= 0 || id >= s.nextMsg {
		return nil, failure(400, "Bad Request: message to react not found")
	}
	var rs []struct {
		Type  string `json:"type"`
		Emoji string `json:"emoji"`
	}
	if raw := p.Get("reaction"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &rs); err != nil {
			return nil, failure(400, "Bad Request: can't parse reaction types JSON object")
		}
	}
	if len(rs) > 1 {
		return nil, failure(400, "Bad Request: REACTIONS_TOO_MANY")
	}
	emoji := ""
	for _, r := range rs {
		if r.Type != "emoji" || !slices.Contains(Reactions, r.Emoji) {
			return nil, failure(400, "Bad Request: REACTION_INVALID")
		}
		emoji = r.Emoji
	}
	if s.reactions == nil {
		s.reactions = map[[2]int64]string{}
	}
	s.reactions[[2]int64{chat, int64(id)}] = emoji
	return true, nil
}

// Reaction returns the bot's reaction on message id of chat, or "".
func (s *Server) Reaction(chat int64, id int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reactions[[2]int64{chat, int64(id)}]
}

package web

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf8"
)

// message is one message of a conversation as the page shows it.
type message struct {
	ID      string   `json:"id"`
	From    string   `json:"from"` // "user" or "bot"
	Text    string   `json:"text"` // Markdown
	Choices []choice `json:"choices,omitempty"`
	File    *fileRef `json:"file,omitempty"`
	// Mark is the state of a user's message's turn (REACTIONS), as an
	// emoji: what a reaction shows on a chat platform.
	Mark string `json:"mark,omitempty"`
}

type choice struct {
	Label   string `json:"label"`
	Command string `json:"command"`
}

// fileRef is a file the bot sent, downloaded from /api/files/<ID>.
type fileRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Size int    `json:"size"`
}

// channel is one conversation place on the page.
type channel struct {
	ID       string     `json:"id"`
	Title    string     `json:"title"`
	Messages []*message `json:"messages"`
}

// event is what a stream sends: a snapshot first, then changes. An
// edit that only adds to a message's end is sent as "append", with the
// message's id and the added text, rather than the whole message again.
type event struct {
	Type     string     `json:"type"` // snapshot, channel, message, append
	Channels []*channel `json:"channels,omitempty"`
	Channel  *channel   `json:"channel,omitempty"`
	In       string     `json:"in,omitempty"` // a message's channel
	Message  *message   `json:"message,omitempty"`
	ID       string     `json:"id,omitempty"`   // append: the message
	Text     string     `json:"text,omitempty"` // append: what it adds
}

// Bounds on what the store keeps in memory.
const (
	maxChannels        = 200
	maxMessagesPerChan = 500
	maxFiles           = 64
	subscriberBuffer   = 1024
)

// store holds the page's conversations and the streams watching them.
// Every change is made and broadcast under one lock, so a stream that
// starts with a snapshot misses nothing and sees changes in order.
type store struct {
	mu       sync.Mutex
	channels []*channel
	byID     map[string]*channel
	msgs     map[string]*message // by id
	files    map[string]storedFile
	fileIDs  []string
	subs     map[chan []byte]struct{}
}

func newStore() *store {
	return &store{byID: map[string]*channel{}, msgs: map[string]*message{}, files: map[string]storedFile{},
		subs: map[chan []byte]struct{}{}}
}

// newID returns a random id. A channel's id is its conversation's key,
// kept in STATE_FILE across restarts, while the store starts empty each
// time: a counter would give a new page conversation the id of an old one,
// which would then silently continue it.
func newID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return prefix + hex.EncodeToString(b)
}

// newChannel adds an empty conversation place.
func (s *store) newChannel() *channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.channelLocked(newID("c"))
}

// channelLocked returns channel id, made when it is new (the oldest
// forgotten past maxChannels).
func (s *store) channelLocked(id string) *channel {
	if c, ok := s.byID[id]; ok {
		return c
	}
	c := &channel{ID: id, Title: "New conversation", Messages: []*message{}}
	s.channels = append(s.channels, c)
	s.byID[id] = c
	if len(s.channels) > maxChannels {
		old := s.channels[0]
		s.channels = s.channels[1:]
		delete(s.byID, old.ID)
		for _, m := range old.Messages {
			delete(s.msgs, m.ID)
		}
	}
	s.broadcastLocked(event{Type: "channel", Channel: &channel{ID: c.ID, Title: c.Title}})
	return c
}

// restore adds a conversation place for a conversation that was kept
// across a restart, titled and with a note, since its messages were not.
func (s *store) restore(id, title, note string) {
	s.mu.Lock()
	c := s.channelLocked(id)
	c.Title = title
	s.mu.Unlock()
	s.add(id, &message{From: "bot", Text: note})
}

// hasChannel reports whether id is a conversation place of the page.
func (s *store) hasChannel(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.byID[id]
	return ok
}

// add appends a message to channel in and broadcasts it. The user's first
// words title the channel.
func (s *store) add(in string, m *message) *message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channelLocked(in)
	m.ID = newID("m")
	c.Messages = append(c.Messages, m)
	s.msgs[m.ID] = m
	if len(c.Messages) > maxMessagesPerChan {
		delete(s.msgs, c.Messages[0].ID)
		c.Messages = c.Messages[1:]
	}
	if m.From == "user" && c.Title == "New conversation" && !strings.HasPrefix(m.Text, "/") && m.Text != "" {
		c.Title = title(m.Text)
		s.broadcastLocked(event{Type: "channel", Channel: &channel{ID: c.ID, Title: c.Title}})
	}
	s.broadcastLocked(event{Type: "message", In: in, Message: copyMessage(m)})
	return copyMessage(m)
}

// edit replaces a bot message's text and drops its buttons. A streaming
// reply grows at its end, edit after edit: then only what it adds is sent.
func (s *store) edit(in, id, text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.msgs[id]
	if !ok {
		return false
	}
	if added, grows := strings.CutPrefix(text, m.Text); grows && len(m.Choices) == 0 {
		m.Text = text
		if added != "" {
			s.broadcastLocked(event{Type: "append", In: in, ID: id, Text: added})
		}
		return true
	}
	m.Text, m.Choices = text, nil
	s.broadcastLocked(event{Type: "message", In: in, Message: copyMessage(m)})
	return true
}

// mark sets a message's mark and broadcasts the message; it reports
// false when the message is no longer kept.
func (s *store) mark(in, id, mark string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.msgs[id]
	if !ok {
		return false
	}
	if m.Mark != mark {
		m.Mark = mark
		s.broadcastLocked(event{Type: "message", In: in, Message: copyMessage(m)})
	}
	return true
}

// storedFile is a file the bot sent, kept for the page to download.
type storedFile struct {
	name string
	data []byte
}

// addFile keeps a file for download (the oldest forgotten past maxFiles).
func (s *store) addFile(name string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := newID("f")
	s.files[id] = storedFile{name, data}
	s.fileIDs = append(s.fileIDs, id)
	if len(s.fileIDs) > maxFiles {
		delete(s.files, s.fileIDs[0])
		s.fileIDs = s.fileIDs[1:]
	}
	return id
}

func (s *store) file(id string) (storedFile, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[id]
	return f, ok
}

// subscribe returns a stream of encoded events, starting with a snapshot,
// and a function that ends it. A stream that falls behind is closed: the
// page reconnects and gets a new snapshot.
func (s *store) subscribe() (<-chan []byte, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan []byte, subscriberBuffer)
	snap, _ := json.Marshal(event{Type: "snapshot", Channels: s.channels})
	ch <- snap
	s.subs[ch] = struct{}{}
	return ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.subs[ch]; ok {
			delete(s.subs, ch)
			close(ch)
		}
	}
}

func (s *store) broadcastLocked(ev event) {
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	for ch := range s.subs {
		select {
		case ch <- data:
		default:
			delete(s.subs, ch)
			close(ch)
		}
	}
}

func copyMessage(m *message) *message {
	c := *m
	c.Choices = append([]choice(nil), m.Choices...)
	return &c
}

// title is a conversation's first words, cut to fit a list.
func title(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= 60 {
		return text
	}
	r := []rune(text)
	return string(r[:59]) + "…"
}

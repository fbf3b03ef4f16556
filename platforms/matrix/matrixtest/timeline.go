package matrixtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// guard bounds every wait, so a broken test fails instead of hanging.
const guard = 30 * time.Second

// Timeline is what a user's client has received through /sync: every
// event of every room it is in, in order. A test waits on it instead of
// sleeping: each change wakes the waiters. It is safe for concurrent use.
type Timeline struct {
	user    User
	mu      sync.Mutex
	events  map[id.RoomID][]*event.Event
	invites map[id.RoomID]bool
	changed chan struct{}
}

// Watch long-polls /sync as u until t ends, and returns what it receives.
func (u User) Watch(t testing.TB) *Timeline {
	tl := &Timeline{user: u, events: map[id.RoomID][]*event.Event{}, invites: map[id.RoomID]bool{}, changed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		since := ""
		for ctx.Err() == nil {
			resp, err := u.Client.FullSyncRequest(ctx, mautrix.ReqSync{Timeout: 5000, Since: since})
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					t.Logf("%s's sync: %v", u.ID, err)
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond): // the server's hiccup: try again
				}
				continue
			}
			since = resp.NextBatch
			tl.add(resp)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return tl
}

func (tl *Timeline) add(resp *mautrix.RespSync) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for room := range resp.Rooms.Invite {
		tl.invites[room] = true
	}
	for room, j := range resp.Rooms.Join {
		for _, ev := range j.Timeline.Events {
			ev.RoomID = room
			_ = ev.Content.ParseRaw(ev.Type)
			tl.events[room] = append(tl.events[room], ev)
		}
	}
	close(tl.changed)
	tl.changed = make(chan struct{})
}

// Invited reports whether the user has been invited to room.
func (tl *Timeline) Invited(room id.RoomID) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.invites[room]
}

// Events returns the room's events so far.
func (tl *Timeline) Events(room id.RoomID) []*event.Event {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]*event.Event(nil), tl.events[room]...)
}

// Until waits until cond holds, checking it after each sync; it fails t
// after 30 seconds.
func (tl *Timeline) Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(guard)
	for {
		tl.mu.Lock()
		changed := tl.changed
		tl.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("%s: timed out waiting for %s", tl.user.ID, what)
		}
	}
}

// Message is a message as a client shows it: its latest edit applied.
type Message struct {
	ID      id.EventID
	Sender  id.UserID
	Thread  id.EventID // the thread's root, if in one
	Content *event.MessageEventContent
	// Edits counts the m.replace events applied.
	Edits int
	// Reactions are the keys of the reactions on it that stand
	// (not redacted), by sender.
	Reactions map[id.UserID][]string
}

// Messages returns the room's messages (edits applied, edits and
// reactions not listed on their own), in order.
func (tl *Timeline) Messages(room id.RoomID) []Message {
	events := tl.Events(room)
	redacted := map[id.EventID]bool{}
	for _, ev := range events {
		if ev.Type == event.EventRedaction {
			redacted[ev.Redacts] = true
			if r := ev.Content.AsRedaction(); r.Redacts != "" {
				redacted[r.Redacts] = true
			}
		}
	}
	var out []Message
	index := map[id.EventID]int{}
	for _, ev := range events {
		switch ev.Type {
		case event.EventMessage:
			c := ev.Content.AsMessage()
			if orig := c.RelatesTo.GetReplaceID(); orig != "" {
				if i, ok := index[orig]; ok && c.NewContent != nil && ev.Sender == out[i].Sender {
					out[i].Content, out[i].Edits = c.NewContent, out[i].Edits+1
				}
				continue
			}
			index[ev.ID] = len(out)
			out = append(out, Message{ID: ev.ID, Sender: ev.Sender, Thread: c.RelatesTo.GetThreadParent(), Content: c, Reactions: map[id.UserID][]string{}})
		case event.EventReaction:
			rel := ev.Content.AsReaction().RelatesTo
			if i, ok := index[rel.EventID]; ok && !redacted[ev.ID] {
				out[i].Reactions[ev.Sender] = append(out[i].Reactions[ev.Sender], rel.Key)
			}
		}
	}
	return out
}

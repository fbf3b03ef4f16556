package core

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// ConversationKey identifies one conversation: a user in a channel, and
// optionally a thread (or forum topic) within it. Adapters decide how their
// platform's places map onto these fields; the router only compares them.
type ConversationKey struct {
	Platform string
	User     string
	Channel  string
	Thread   string
}

// String returns a compact form for logs.
func (k ConversationKey) String() string {
	if k.Thread != "" {
		return fmt.Sprintf("%s/%s/%s/%s", k.Platform, k.User, k.Channel, k.Thread)
	}
	return fmt.Sprintf("%s/%s/%s", k.Platform, k.User, k.Channel)
}

// Target is where the bot writes: the key's channel and thread.
func (k ConversationKey) Target() Target {
	return Target{Platform: k.Platform, Channel: k.Channel, Thread: k.Thread}
}

// Target is a place a platform can post messages in.
type Target struct {
	Platform string
	Channel  string
	Thread   string
	// ReplyTo is an adapter's own reference for replying to the triggering
	// message or interaction (a Discord interaction token, a Slack
	// response_url). Adapters that need none leave it empty.
	ReplyTo string
	// Quote is the user's message (its Message.ID) a post is addressed
	// to: the router sets it on a question to its turn's author, which a
	// platform where a reply is what reaches someone in a muted chat
	// (Telegram) posts as a reply to that message. Others ignore it.
	Quote string
}

// Message is one thing a user wrote: plain text or a command.
type Message struct {
	Key ConversationKey
	// ID is the platform's id for the message or event; adapters use it to
	// drop redelivered events before they reach the router.
	ID string
	// UserName is a display name, for logs and replies only.
	UserName string
	Text     string
	// Files are the files sent with the message; the router saves them
	// in the workdir before the turn.
	Files []Attachment
	// ReplyTo is copied into the Target of the router's replies.
	ReplyTo string
	// Allowed is set by an adapter that admitted the user by a rule of its
	// own platform that Access cannot express (a Discord role). The router
	// then serves the user even when Access does not list them; an adapter
	// never uses it to refuse.
	Allowed bool
	// From is the author's user id when it is not Key.User: in a shared
	// conversation (a Slack thread any allowed user may continue) the key
	// leaves User empty, yet access is still checked per author.
	From string
	// Done, when set, is called exactly once when the router has finished
	// with the message: its answer, or its turn's final reply, delivered, or
	// the message refused or dropped. A platform that reads a script (the
	// console on a pipe) waits for it before it reads the next line.
	Done func()
	// origin is who made the message (Origin): a person unless core made
	// it on someone's behalf. Unexported, so that no adapter nor plugin
	// can make a message pass for another kind.
	origin OriginKind
	// depth is, for a message an agent's schedule sent, how many such
	// schedules in a row led to it (Schedule.Depth); 0 for any other.
	depth int
}

// finisher returns m's Done, safe to call more than once, or a no-op.
func (m Message) finisher() func() {
	if m.Done == nil {
		return func() {}
	}
	return sync.OnceFunc(m.Done)
}

// Author returns the id of the user who wrote m: From when set, else the
// key's User.
func (m Message) Author() string {
	if m.From != "" {
		return m.From
	}
	return m.Key.User
}

// AuthorName returns how the chat names m's author: their display name
// when the platform gave one, else their id.
func (m Message) AuthorName() string {
	if m.UserName != "" {
		return m.UserName
	}
	return m.Author()
}

// Target returns where replies to m go.
func (m Message) Target() Target {
	t := m.Key.Target()
	t.ReplyTo = m.ReplyTo
	return t
}

// AttachmentKind says what a user's file is, for what the bot does with
// it beyond saving it.
type AttachmentKind int

const (
	// FileDocument is any file: saved and named in the prompt.
	FileDocument AttachmentKind = iota
	// FileImage is also passed to CLIs that take images (Turn.Images).
	FileImage
	// FileVoice is a voice note: transcribed, and the text is the prompt.
	FileVoice
)

// Attachment is a file a user sent with a message.
type Attachment struct {
	// Name is the file's name as sent; the router cleans it.
	Name string
	// Size is what the platform declared, 0 when it did not.
	Size int64
	Kind AttachmentKind
	// Open downloads the file. The adapter's closure holds what that needs
	// (a token, which never leaves it).
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// Origin returns who made m.
func (m Message) Origin() Origin { return Origin{Kind: m.origin, User: m.Author()} }

// Unattended reports whether m was sent on its author's behalf (a
// schedule, a continuation at a window's reset): nobody may be watching
// its turn (RouterConfig.UnattendedApprovals).
func (m Message) Unattended() bool {
	switch m.origin {
	case OriginSchedule, OriginAgentSchedule, OriginContinuation:
		return true
	}
	return false
}

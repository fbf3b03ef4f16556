package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Handler receives every message a platform sees. It returns quickly: turns
// run in the background.
type Handler func(ctx context.Context, m Message)

// MessageRef identifies a message the bot posted, so it can be edited.
type MessageRef struct {
	Target Target
	ID     string
}

// Limits describes how a platform wants to be written to.
type Limits struct {
	// EditInterval is the least time between two edits of one message.
	EditInterval time.Duration
	// ChannelInterval and ChannelBurst bound all writes (posts and edits)
	// to one channel; zero means no channel limit.
	ChannelInterval time.Duration
	ChannelBurst    int
	// FinalOnly platforms get each page once, when the turn has ended,
	// instead of progressive edits (a console writing to a pipe).
	FinalOnly bool
}

// Format is how a platform wants replies written. Each adapter package
// builds its own from its configuration, without connecting, so that
// jakebot replay renders and paces a stream exactly as the platform would.
type Format interface {
	// Render turns blocks into the text of one or more messages, each
	// within the platform's length limit.
	Render(blocks []ResponseBlock) []string
	Limits() Limits
}

// Platform is a chat service the bot talks through. Implementations must be
// safe for concurrent use.
type Platform interface {
	Format
	// Name is the platform's name in conversation keys and logs.
	Name() string
	// Run receives messages and passes each to h until ctx is cancelled or
	// the platform's input ends; it returns nil in both cases.
	Run(ctx context.Context, h Handler) error
	// Send posts a new message.
	Send(ctx context.Context, to Target, text string) (MessageRef, error)
	// Edit replaces the text of a message the bot posted.
	Edit(ctx context.Context, ref MessageRef, text string) error
}

// Typer is implemented by platforms that can show a typing indicator. The
// router calls Typing repeatedly while a turn runs.
type Typer interface {
	Typing(ctx context.Context, to Target) error
}

// Choice is one option offered to the user; choosing it sends Command as if
// the user had typed it.
type Choice struct {
	Label   string
	Command string
}

// ChoiceOfferer is implemented by platforms that can show buttons or a menu.
// Others get a numbered list. OfferChoices returns the message it posted:
// editing it later (Platform.Edit) replaces its text and removes its
// buttons.
type ChoiceOfferer interface {
	OfferChoices(ctx context.Context, to Target, text string, choices []Choice) (MessageRef, error)
}

// Notifier is implemented by platforms where a new message does not
// always make a phone buzz (a streamed reply is edits): Notify posts text
// to user in a way that notifies them, such as an @mention. The router
// calls it when a turn needs its author: it waits for an answer, or it
// ended after running long. Elsewhere the router posts text as it is.
type Notifier interface {
	Notify(ctx context.Context, to Target, user string, why NotifyReason, text string) error
}

// NotifyReason says why the router notifies.
type NotifyReason int

const (
	// NotifyQuestion: a turn waits for its author's answer. The question
	// was just posted as a new message.
	NotifyQuestion NotifyReason = iota
	// NotifyLongTurn: a turn that ran longer than NotifyAfter ended; its
	// reply was streamed as edits.
	NotifyLongTurn
	// NotifyAgent: the agent's notify tool (AgentTools) tells the author
	// something in the middle of its turn.
	NotifyAgent
)

// Refuser is implemented by platforms that can refuse a user privately (an
// ephemeral message); others get an ordinary reply.
type Refuser interface {
	Refuse(ctx context.Context, m Message, text string) error
}

// ThreadOpener is implemented by platforms that give a new conversation a
// thread of its own (Discord's text channels). The router calls
// OpenThread on /<plugin> start once the start can no longer be refused:
// the user is served and the workdir is resolved inside their roots. The
// conversation then lives in the returned channel, and the start's reply
// goes there. An empty channel and a nil error mean no thread here (the
// place is a thread already, or threads are off); an error leaves the
// conversation where it was started. workdir and plugin (its display
// name) are for naming the thread.
type ThreadOpener interface {
	OpenThread(ctx context.Context, m Message, workdir, plugin string) (channel string, err error)
}

// Readmitter is implemented by platforms that admit users by a rule of
// their own (Message.Allowed: a Discord role) and can check that rule
// again while the user is away. The router asks it each time a scheduled
// message (/at, /every) of a user Access does not list falls due, and
// refuses to schedule for such a user on platforms without one. Readmit
// reports whether user is admitted now where key is (its channel or
// thread); an error means the platform could not tell.
type Readmitter interface {
	Readmit(ctx context.Context, key ConversationKey, user string) (bool, error)
}

// RateLimitError is returned by a platform's Send or Edit when the service
// asked the bot to slow down. The coordinator waits RetryAfter and retries,
// coalescing edits meanwhile.
type RateLimitError struct {
	RetryAfter time.Duration
	Err        error
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited, retry after %s: %v", e.RetryAfter, e.Err)
}

func (e *RateLimitError) Unwrap() error { return e.Err }

// AsRateLimit reports whether err is (or wraps) a RateLimitError.
func AsRateLimit(err error) (*RateLimitError, bool) {
	var rl *RateLimitError
	ok := errors.As(err, &rl)
	return rl, ok
}

// APIError names op in err from a platform's client library and, when
// err is (or wraps) the library's rate-limit error E, makes it a
// *RateLimitError after retryAfter(E), so the coordinator waits and
// retries. A nil err stays nil.
func APIError[E error](op string, err error, retryAfter func(E) time.Duration) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("%s: %w", op, err)
	var limited E
	if errors.As(err, &limited) {
		return &RateLimitError{RetryAfter: retryAfter(limited), Err: wrapped}
	}
	return wrapped
}

// FileSender is implemented by platforms that can post a file.
type FileSender interface {
	SendFile(ctx context.Context, to Target, name string, data []byte, caption string) (MessageRef, error)
}

// Transcriber turns a voice note into text (TRANSCRIBE_CMD).
type Transcriber func(ctx context.Context, file string) (string, error)

// Lookup answers the questions an adapter has before a message reaches
// the router, such as what to suggest while a user types a command, with
// the router's own policy: who is allowed, which roots a user may work
// in, whose sessions they may resume. Adapters get a Lookup and a
// Handler, never the router's internals, so that the policy lives in one
// place. *Router implements it; it is safe for concurrent use.
type Lookup interface {
	// Admits reports whether the router serves m's author (Access, or
	// the adapter's own rule through m.Allowed).
	Admits(m Message) bool
	// Conversation returns the active conversation at key.
	Conversation(key ConversationKey) (Conversation, bool)
	// ResumeCandidates lists plugin's past sessions that m's author may
	// resume where m was written: in the conversation's workdir, or the
	// one that ended there last, resolved again under their policy (or
	// the default workdir), their own
	// sessions only unless they are an admin. Titles are redacted.
	// Someone not admitted gets none.
	ResumeCandidates(ctx context.Context, m Message, plugin string) ([]ConversationInfo, error)
	// WorkdirSuggestions lists at most n directories m's author may work
	// in that match what they typed: with nothing typed, the current
	// workdir, the roots open to them and the workdir's subdirectories;
	// otherwise the subdirectories of the typed path's parent that start
	// with its last element. Someone not admitted gets none.
	WorkdirSuggestions(m Message, typed string, n int) []string
	// PlatformConversations returns the active conversations on platform, most
	// recently used first, as kept across a restart.
	PlatformConversations(platform string) []Entry
}

// NoLookup is the Lookup of an adapter built without a router (a test of
// its wire protocol): no conversations, and nobody admitted.
type NoLookup struct{}

func (NoLookup) Admits(Message) bool { return false }

func (NoLookup) Conversation(ConversationKey) (Conversation, bool) { return Conversation{}, false }

func (NoLookup) WorkdirSuggestions(Message, string, int) []string { return nil }

func (NoLookup) PlatformConversations(string) []Entry { return nil }

func (NoLookup) ResumeCandidates(context.Context, Message, string) ([]ConversationInfo, error) {
	return nil, nil
}

// answer is what the router says at once in reply to a message, outside a
// turn's own reply: a text, an offer of choices (typed says how to do the
// same by typing, for a platform without buttons), or an error. The zero
// answer says nothing.
type answer struct {
	text    string
	choices []Choice
	typed   string
	err     error
}

package core

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// RecordKind says what a Record describes.
type RecordKind string

const (
	// RecordCommand is one slash command.
	RecordCommand RecordKind = "command"
	// RecordTurn is one turn of a conversation.
	RecordTurn RecordKind = "turn"
	// RecordRefused is a message from a user who is not allowed.
	RecordRefused RecordKind = "refused"
	// RecordLimited is a message refused by the per-user rate limit.
	RecordLimited RecordKind = "rate_limited"
	// RecordSteered is a message added to a running turn (BUSY=steer,
	// /steer).
	RecordSteered RecordKind = "steered"
	// RecordRejected is a message refused for its content (too long, NUL
	// bytes) or because the bot was shutting down.
	RecordRejected RecordKind = "rejected"
	// RecordAgentTool is a call of the bot's own tools by a turn's agent
	// (AgentTools): Command names the tool, Text what it was given.
	RecordAgentTool RecordKind = "agent_tool"
)

// Turn and command outcomes in Records.
const (
	OutcomeOK          = "ok"
	OutcomeError       = "error"
	OutcomePanic       = "panic"
	OutcomeStopped     = "stopped"
	OutcomeTimeout     = "timeout"
	OutcomeIdleTimeout = "idle_timeout"
	OutcomeShutdown    = "shutdown"
	OutcomeCancelled   = "cancelled"
)

// Record is what the router tells an Observer about one message it
// handled. It holds no secret: SessionID is the CLI's session id, and
// Text is the user's message, which observers write only when configured
// to.
type Record struct {
	Kind RecordKind
	// ID correlates the records and log lines of one message.
	ID        string
	Time      time.Time
	Key       ConversationKey
	Author    string
	Command   string
	Plugin    string
	Workdir   string
	SessionID string
	Duration  time.Duration
	Outcome   string
	CostUSD   float64
	// InputTokens and OutputTokens are a turn's, as its CLI reported them.
	InputTokens  int
	OutputTokens int
	Text         string
}

// DeliveryOp is one kind of write a StreamCoordinator makes.
type DeliveryOp string

const (
	DeliverySend DeliveryOp = "send"
	DeliveryEdit DeliveryOp = "edit"
	// DeliveryRateLimited is a write the platform refused with a
	// RateLimitError; the coordinator waits and retries.
	DeliveryRateLimited DeliveryOp = "rate_limited"
	DeliveryFailed      DeliveryOp = "failed"
)

// Observer is told what the router and its coordinators do, for audit logs
// and metrics; core itself neither writes files nor exports metrics.
// Methods are called from many goroutines and must be safe for concurrent
// use and return quickly.
type Observer interface {
	// Record is called once per command, per turn, and per refused message.
	Record(Record)
	// Delivery is called once per write to a platform.
	Delivery(platform string, op DeliveryOp)
}

// Observers fans out to several observers.
type Observers []Observer

func (os Observers) Record(rec Record) {
	for _, o := range os {
		o.Record(rec)
	}
}

func (os Observers) Delivery(platform string, op DeliveryOp) {
	for _, o := range os {
		o.Delivery(platform, op)
	}
}

// Healther is implemented by platforms that know whether their connection
// to the chat service is up; the bot's health endpoint reports it.
// Platforms without it are reported as running.
type Healther interface {
	// Healthy returns nil while the platform is connected, else why not.
	Healthy() error
}

// Stats is a snapshot of the router's load.
type Stats struct {
	// Conversations is the number of active conversations.
	Conversations int
	// Running is the number of turns running now.
	Running int
	// Warm is the number of CLIs started for a next turn, waiting for its
	// message; they are not running turns.
	Warm int
	// WarmReady is how many of them have started: their handshake is
	// done (a warm CLI that cannot tell is not counted).
	WarmReady int
	// Queued is the number of messages waiting behind running turns or
	// for a turn slot (MaxRunningTurns, MaxUserTurns).
	Queued int
}

// newID returns a short random correlation id.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// isMessageID reports whether s has newID's form.
func isMessageID(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 16 && err == nil
}

type nopObserver struct{}

func (nopObserver) Record(Record)               {}
func (nopObserver) Delivery(string, DeliveryOp) {}

// errNotConnected is a platform's health before its first connection.
var errNotConnected = errors.New("not connected yet")

// Health records a platform's connection state; an adapter embeds it to
// implement Healther and calls Set as its connection comes and goes. The
// zero value reports "not connected yet". It is safe for concurrent use.
type Health struct {
	state atomic.Pointer[healthState]
}

type healthState struct{ err error }

// Set records the connection as up (nil) or down (why).
func (h *Health) Set(err error) { h.state.Store(&healthState{err}) }

// Healthy returns nil while the connection is up, else why not.
func (h *Health) Healthy() error {
	s := h.state.Load()
	if s == nil {
		return errNotConnected
	}
	return s.err
}

// OrDiscard is l, or a logger that drops everything when l is nil: the
// zero value of every Logger option in the bot.
func OrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Turn is one message to a coding CLI, with what it needs to continue the
// conversation.
type Turn struct {
	Key ConversationKey
	// Author is the id of the person whose turn it is, its message's
	// author (Message.Author): a message steered into it names its own
	// (Steering.From), which a runner compares (plugins/remote).
	Author  string
	Workdir string
	Prompt  string
	// SessionID is the CLI's session id from the previous turn, or empty
	// for a new session. (ResumeToken on the runners' wire, as before.)
	SessionID string `json:"ResumeToken"`
	// Ask says the chat answers questions: a plugin whose CLI can ask
	// before a tool runs emits an EventQuestion instead of leaving the
	// decision to the CLI's permission mode.
	Ask bool
	// Model is the model the conversation asked for (/model); empty
	// means the plugin's configured one.
	Model string
	// Mode is one of the plugin's Modes (/mode); empty means its
	// configured permission mode.
	Mode string
	// MaxCostUSD, when positive, is the most the turn may cost: a plugin
	// whose CLI counts its cost stops the turn there.
	MaxCostUSD float64
	// Images are absolute paths of images the user sent (saved in the
	// workdir and named in Prompt too), for CLIs that take images.
	Images []string
	// Inbox, for a plugin whose CLI can take a message in the middle of
	// a turn, is where the messages written meanwhile come (BUSY=steer,
	// /steer). On a runner the turn has an inbox of its own, which the
	// gateway's follows (plugins/remote).
	Inbox *Inbox `json:"-"`
	// Tools, when set, is the bot's MCP server for this turn (issue 31),
	// for the plugin to tell its CLI about. It does not travel: a runner
	// serves the same tools beside its CLI, and its calls come back to
	// the turn's Actions here (plugins/remote).
	Tools *ToolAccess `json:"-"`
	// ReadOnly asks for a turn that may read the workdir but change
	// nothing in it (a review, /ask without --write). The plugin runs its
	// CLI by the CLI's own read-only means (ReadOnlyPlugin); a plugin that
	// has none must refuse the turn with ErrNoReadOnly rather than run it
	// with the right to write. It travels to runners like the rest.
	ReadOnly bool
	// Side, for a turn of agents side by side (/ask, /review, /pair), is
	// what the bot must know of it again to follow it in a later process
	// of its own: which agent runs it and what comes after it. A plugin
	// whose turns outlive the process (a runner's) keeps it with the
	// turn, as it is, and hands it back (UnfinishedTurn.Side); the others
	// ignore it. It does not travel to runners.
	Side json.RawMessage `json:"-"`
}

// ErrNoReadOnly is what a plugin returns for a ReadOnly turn its CLI has no
// means to keep from writing.
var ErrNoReadOnly = Errorf("this agent has no read-only mode, so it cannot review or answer without the right to write")

// ReadOnlyPlugin is implemented by plugins whose CLI can run a turn that
// reads but cannot write (Turn.ReadOnly). ReadOnlyMeans says how, in a few
// words for the chat ("Codex's read-only sandbox"), or ok false when this
// configuration has none (an ACP agent announcing no read-only mode), so
// that the bot refuses before it starts the CLI.
type ReadOnlyPlugin interface {
	ReadOnlyMeans() (means string, ok bool)
}

// Mode is one of a CLI's own permission modes, which /mode offers.
type Mode struct {
	Name string
	// Help says what the mode lets the agent do, in a line.
	Help string
	// Bypass marks a mode in which tools run with nobody approving them:
	// only admins may choose it, unless RouterConfig.AllowBypassModes.
	Bypass bool
}

// ModeProvider is implemented by plugins whose CLI has permission modes
// a conversation may switch between.
type ModeProvider interface {
	Modes() []Mode
}

// ConversationInfo summarises a past conversation from a CLI's own history.
type ConversationInfo struct {
	// SessionID is what resumes it (ID on the runners' wire, as before).
	SessionID string `json:"ID"`
	Title     string
	Updated   time.Time
}

// Plugin runs one coding CLI. Implementations must be safe for concurrent
// use: turns of different conversations run in parallel.
type Plugin interface {
	// ID is the command name users type, such as "claude".
	ID() string
	// Name is the display name, such as "Claude Code".
	Name() string
	// Run runs one turn: it spawns the CLI in t.Workdir, emits events as the
	// CLI streams, and returns when the CLI has exited. Cancelling ctx must
	// kill the CLI and everything it started. Run returns an error when the
	// turn failed in a way it has not already reported as an error block;
	// a UserError's message is shown as it is.
	Run(ctx context.Context, t Turn, emit func(Event)) (TurnResult, error)
	// Conversations lists the CLI's past conversations for workdir, newest
	// first. A CLI with no history returns none and no error.
	Conversations(ctx context.Context, workdir string) ([]ConversationInfo, error)
}

// SessionIDChecker is implemented by plugins whose session ids have a known
// format; the router refuses ids that fail the check before they reach a CLI.
type SessionIDChecker interface {
	CheckSessionID(id string) error
}

// SessionKeeper is implemented by plugins that may be unable to continue a
// session (a CLI configured without a way to find its session id). When
// KeepsSessions is false every turn starts afresh, and /status says so.
type SessionKeeper interface {
	KeepsSessions() bool
}

// Registry holds the plugins by ID. It is built once at start-up and only
// read afterwards, so it is safe for concurrent use without locks.
type Registry struct {
	byID     map[string]Plugin
	ids      []string
	commands *Commands
}

// NewRegistry returns a registry of plugins. It fails on a duplicate or
// reserved ID.
func NewRegistry(plugins ...Plugin) (*Registry, error) {
	r := &Registry{byID: make(map[string]Plugin)}
	for _, p := range plugins {
		id := p.ID()
		if _, dup := r.byID[id]; dup {
			return nil, fmt.Errorf("plugin %q registered twice", id)
		}
		if IsReserved(id) {
			return nil, fmt.Errorf("plugin id %q clashes with the /%s command", id, id)
		}
		r.byID[id] = p
		r.ids = append(r.ids, id)
	}
	sort.Strings(r.ids)
	ps := make([]Plugin, len(r.ids))
	for i, id := range r.ids {
		ps[i] = r.byID[id]
	}
	r.commands = NewCommands(ps)
	return r, nil
}

// Commands returns the command table of the registry's plugins.
func (r *Registry) Commands() *Commands { return r.commands }

// Get returns the plugin with the given ID.
func (r *Registry) Get(id string) (Plugin, bool) {
	p, ok := r.byID[id]
	return p, ok
}

// name is the display name of the plugin id, or the id.
func (r *Registry) name(id string) string {
	if p, ok := r.Get(id); ok {
		return p.Name()
	}
	return id
}

// IDs returns the registered plugin IDs, sorted.
func (r *Registry) IDs() []string { return slices.Clone(r.ids) }

package core

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
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

// Approval modes every plugin has: they say whether the chat answers the
// CLI's questions, whatever the CLI's own mode.
const (
	ModeAsk  = "ask"
	ModeAuto = "auto"
	// ModeDefault clears a conversation's /model or CLI mode.
	ModeDefault = "default"
)

// IsBotMode reports whether name is one of the modes every plugin has
// (ask, auto, default), in any case: a CLI's own mode must be offered
// under another name (plugins/configured names an agent's "default"
// agent-default).
func IsBotMode(name string) bool {
	return strings.EqualFold(name, ModeAsk) || strings.EqualFold(name, ModeAuto) || strings.EqualFold(name, ModeDefault)
}

// ModesOf lists the modes /mode offers for p: ask, auto, default, then
// the CLI's own, but for one named as those three, which the bot's
// would shadow.
func ModesOf(p Plugin) []Mode {
	modes := []Mode{
		{Name: ModeAsk, Help: "the chat approves tool calls the CLI asks about"},
		{Name: ModeAuto, Help: "no questions: the CLI's permission mode decides alone"},
		{Name: ModeDefault, Help: "the CLI's mode as the bot is configured"},
	}
	if mp, ok := p.(ModeProvider); ok {
		for _, md := range mp.Modes() {
			if !IsBotMode(md.Name) {
				modes = append(modes, md)
			}
		}
	}
	return modes
}

// modelName is what a model name may look like: no spaces, no leading
// dash (it becomes a CLI argument).
var modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+\[\]-]{0,99}$`)

// modeWords says in words how a turn in CLI mode mode runs, a phrase
// that follows /status's "Mode: ": the mode's name, or the plugin's
// default (as "Model: " says it), then whether the chat approves.
func modeWords(mode string, ask bool) string {
	if mode == "" {
		mode = "the plugin's default"
	}
	if ask {
		return mode + ", approvals asked in the chat"
	}
	return mode + ", no approvals asked"
}

// Warmer is implemented by plugins whose CLI can start before its message
// exists: the router starts the next turn's CLI as soon as a turn ends, so
// that the message only has to be handed over. It is still one process
// per turn: the warm process is the next turn's.
type Warmer interface {
	// Warm starts the CLI for turn t, whose Prompt is empty, and returns
	// it waiting. Cancelling life kills it. ErrNoWarm means this turn
	// cannot be started early.
	Warm(life context.Context, t Turn) (WarmTurn, error)
}

// WarmTurn is a CLI started early, waiting for its turn's message.
type WarmTurn interface {
	// Run hands over the message and runs the turn, as Plugin.Run does:
	// t is the turn Warm was given with its message (Prompt, Images) set.
	Run(ctx context.Context, t Turn, emit func(Event)) (TurnResult, error)
	// Fresh reports whether what the CLI loaded at start (its session) is
	// still current; a stale one must not answer.
	Fresh() bool
	// Close stops an unused warm CLI and waits until it is gone.
	Close()
}

// ErrNoWarm is returned by Warm for a turn that cannot start early.
var ErrNoWarm = errors.New("this turn cannot start before its message")

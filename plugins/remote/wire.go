package remote

import (
	"crypto/rand"
	"errors"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// The subjects, all under one versioned prefix, so that a gateway and a
// runner of different wire versions never hear each other. A runner's
// own subjects carry its name, which lets a NATS server confine each
// runner to them (see README.md). Version 2 added the admin flag of
// requests, batched turn messages in a JetStream stream, and runner
// instances; version 3, acknowledged cancels and answers on the runner's
// own subjects (a v2 runner would never hear them), files, diffs,
// worktrees and plugin modes; version 4, one stream subject per runner,
// whose messages carry parts of many turns.
const prefix = "jakebot.v4."

// Subjects.
func discoverSubject() string              { return prefix + "discover" }
func announceSubject(runner string) string { return prefix + "announce." + runner }
func announceAll() string                  { return prefix + "announce.*" }
func runnerSubject(runner, what string) string {
	return prefix + "runner." + runner + "." + what
}
func turnSubject(runner, id, what string) string {
	return prefix + "runner." + runner + ".turn." + id + "." + what
}

// newID names a turn, an upload or a runner process: 128 random bits in
// base32, one subject token, a key of the turns' bucket and, with a
// sequence number, a JetStream message id. Not nuid's counter: a runner
// that saw two of its own ids could tell another runner's next ones and
// have that runner's turn messages dropped as duplicates.
func newID() string { return rand.Text() }

// runnerInbox is where the replies to a runner's own requests (JetStream's
// acknowledgements of its turn messages) come: under its own subjects, so
// the server's permissions need name nothing else.
func runnerInbox(runner string) string { return runnerSubject(runner, "inbox") }

// JetStream: the stream of every runner's turn messages, and the bucket of
// the turns a gateway follows. Both are made by the gateway.
const (
	eventStream = "jakebot_events"
	turnBucket  = "jakebot_turns"
	// eventRetention bounds how long a turn's messages are kept: a
	// gateway down for longer finds the turn's reply gone.
	eventRetention = 24 * time.Hour
	// eventBytes bounds the stream's size; the oldest go first.
	eventBytes = 1 << 30
)

// eventSubject is where runner's turn messages go into the stream.
func eventSubject(runner string) string { return runnerSubject(runner, "events") }
func eventSubjects() string             { return eventSubject("*") }

// Announcement is what a runner says of itself, every AnnounceInterval
// and when a gateway asks (discover). Instance is new each time the
// runner process starts: a turn accepted by another instance is lost.
// Roots come with the one users other than admins may work in first.
type Announcement struct {
	Name     string       `json:"name"`
	Instance string       `json:"instance"`
	Plugins  []PluginInfo `json:"plugins"`
	Roots    []string     `json:"roots"`
}

// PluginInfo is one plugin a runner serves, with the modes of its own
// (core.ModeProvider) that /mode offers, and ReadOnly, its means to run a
// read-only turn (core.ReadOnlyPlugin) when it has one. A runner of before
// says nothing of them: the gateway takes it to have none.
type PluginInfo struct {
	ID       string     `json:"id"`
	Name     string     `json:"name"`
	Modes    []wireMode `json:"modes,omitempty"`
	ReadOnly string     `json:"read_only,omitempty"`
}

// wireMode is a core.Mode.
type wireMode struct {
	Name   string `json:"name"`
	Help   string `json:"help,omitempty"`
	Bypass bool   `json:"bypass,omitempty"`
}

// wireError is an error crossing the wire: a user error stays one, so the
// chat shows its words rather than "internal error". NotARepo and
// NotFound say it is gitrepo.ErrNotARepo or core.ErrNoSuchDir, which the
// gateway acts on.
type wireError struct {
	Message  string `json:"message"`
	User     bool   `json:"user,omitempty"`
	NotARepo bool   `json:"not_a_repo,omitempty"`
	NotFound bool   `json:"not_found,omitempty"`
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	if errors.Is(err, gitrepo.ErrNotARepo) {
		return &wireError{Message: err.Error(), NotARepo: true}
	}
	var ue *core.UserError
	if errors.As(err, &ue) {
		return &wireError{Message: core.UserMessage(err), User: true, NotFound: errors.Is(err, core.ErrNoSuchDir)}
	}
	return &wireError{Message: err.Error()}
}

func (e *wireError) err() error {
	switch {
	case e == nil:
		return nil
	case e.NotARepo:
		return gitrepo.ErrNotARepo
	case e.NotFound:
		return &core.UserError{Msg: e.Message, Err: core.ErrNoSuchDir}
	case e.User:
		return core.Errorf("%s", e.Message)
	}
	return errors.New(e.Message)
}

// Admin, in a request, says the user is an admin of the gateway: the
// runner then lets them work in all of its roots (else only in its
// default root) and choose a bypass mode. The runner's roots bound both.
type resolveRequest struct {
	Path  string `json:"path"`
	Admin bool   `json:"admin,omitempty"`
}

type resolveReply struct {
	Workdir string     `json:"workdir,omitempty"`
	Error   *wireError `json:"error,omitempty"`
}

type listRequest struct {
	Plugin  string `json:"plugin"`
	Workdir string `json:"workdir"`
	Admin   bool   `json:"admin,omitempty"`
}

type listReply struct {
	Conversations []core.ConversationInfo `json:"conversations,omitempty"`
	Error         *wireError              `json:"error,omitempty"`
}

// diffRequest asks what changed in a workdir (/diff), in its
// conversation's worktree when it has one.
type diffRequest struct {
	Workdir  string        `json:"workdir"`
	Worktree *wireWorktree `json:"worktree,omitempty"`
	Admin    bool          `json:"admin,omitempty"`
}

// wireWorktree is a gitrepo.Worktree on the runner.
type wireWorktree struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Main   string `json:"main"`
}

// worktreeRequest makes a conversation's worktree (Op "create", of
// Workdir's repository, named Name), merges it ("merge", with Title as
// the commit's message) or removes it ("remove").
type worktreeRequest struct {
	Op       string       `json:"op"`
	Workdir  string       `json:"workdir,omitempty"`
	Name     string       `json:"name,omitempty"`
	Worktree wireWorktree `json:"worktree"`
	Title    string       `json:"title,omitempty"`
	Admin    bool         `json:"admin,omitempty"`
}

// worktreeReply is the worktree made and the workdir in it, or what the
// merge did.
type worktreeReply struct {
	Worktree wireWorktree `json:"worktree"`
	Workdir  string       `json:"workdir,omitempty"`
	Message  string       `json:"message,omitempty"`
	Error    *wireError   `json:"error,omitempty"`
}

// diffReply is gitrepo.Changes. Stat and Patch travel as bytes (base64):
// JSON would escape a patch's <, > and & to six bytes each. A patch that
// would not fit in one message is cut, and PatchSize is its whole length.
type diffReply struct {
	Stat      []byte     `json:"stat,omitempty"`
	Patch     []byte     `json:"patch,omitempty"`
	PatchSize int        `json:"patch_size,omitempty"`
	Since     string     `json:"since,omitempty"`
	Error     *wireError `json:"error,omitempty"`
}

// fileRequest asks for a part of a file in a workdir (/file), from
// Offset. Max is the gateway's ATTACHMENT_MAX_BYTES. After the first part,
// Size and ModTime are the file's as the first reply gave them: a file
// that changed meanwhile is refused rather than sent half old, half new.
type fileRequest struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path"`
	Admin   bool   `json:"admin,omitempty"`
	Max     int64  `json:"max"`
	Offset  int64  `json:"offset,omitempty"`
	Size    int64  `json:"size,omitempty"`
	ModTime int64  `json:"mod_time,omitempty"`
}

// fileReply is a part of the file: Data from the request's Offset, as
// much as fits in one message.
type fileReply struct {
	Path    string     `json:"path,omitempty"`
	Size    int64      `json:"size,omitempty"`
	ModTime int64      `json:"mod_time,omitempty"`
	Data    []byte     `json:"data,omitempty"`
	Error   *wireError `json:"error,omitempty"`
}

// uploadRequest carries a part of the files sent with a message, to save
// in a conversation's workdir: the files go one after another (File from
// 0), each in parts from Offset 0; Commit, after the last part, saves them
// all under their names; Abort drops them. ID names the upload.
type uploadRequest struct {
	ID      string `json:"id"`
	Workdir string `json:"workdir,omitempty"`
	Admin   bool   `json:"admin,omitempty"`
	File    int    `json:"file,omitempty"`
	Name    string `json:"name,omitempty"`
	Offset  int64  `json:"offset,omitempty"`
	Data    []byte `json:"data,omitempty"`
	Commit  bool   `json:"commit,omitempty"`
	Abort   bool   `json:"abort,omitempty"`
}

// uploadReply accepts a part, or answers Commit with the files' paths.
type uploadReply struct {
	Paths []string   `json:"paths,omitempty"`
	Error *wireError `json:"error,omitempty"`
}

// turnRequest starts a turn. Turn.Images are paths on the runner, of
// images uploaded into the workdir's uploads folder there.
// Tools are the agent tools the gateway answers for the turn (its
// AGENT_TOOLS); with none, the runner serves its CLI none.
type turnRequest struct {
	ID     string    `json:"id"`
	Plugin string    `json:"plugin"`
	Admin  bool      `json:"admin,omitempty"`
	Turn   core.Turn `json:"turn"`
	Tools  []string  `json:"tools,omitempty"`
}

// turnReply accepts a turn (Instance: the runner process running it) or
// refuses it.
type turnReply struct {
	Instance string     `json:"instance,omitempty"`
	Error    *wireError `json:"error,omitempty"`
}

// turnMessage is one message of a running turn, numbered from 1: the
// events since the last one, and at the end (Done) the result.
type turnMessage struct {
	Turn   string           `json:"turn"`
	Seq    int              `json:"seq"`
	Events []wireEvent      `json:"events,omitempty"`
	Done   bool             `json:"done,omitempty"`
	Result *core.TurnResult `json:"result,omitempty"`
	Error  *wireError       `json:"error,omitempty"`
}

// wireEvent is a core.Event; a question travels without its callback,
// named by an id its answer comes back with. One with Inbox set is no
// event of the chat's: it says the turn's inbox there opened ("open") or
// closed ("closed"), so that the gateway's takes messages meanwhile.
type wireEvent struct {
	Kind core.EventKind `json:"kind"`
	Text string         `json:"text,omitempty"`
	// Block is nil for a text delta, most of a turn's events: a block
	// held inline made every event a few hundred bytes to decode.
	Block      *core.ResponseBlock `json:"block,omitempty"`
	SessionID  string              `json:"resume_token,omitempty"`
	Model      string              `json:"model,omitempty"`
	Question   *wireQuestion       `json:"question,omitempty"`
	Limit      *core.UsageWindow   `json:"limit,omitempty"`
	Background *core.Background    `json:"background,omitempty"`
	Inbox      string              `json:"inbox,omitempty"`
}

// The states of a turn's inbox on the runner (wireEvent.Inbox).
const (
	inboxOpen   = "open"
	inboxClosed = "closed"
)

type wireQuestion struct {
	ID      string   `json:"id"`
	Tool    string   `json:"tool"`
	Summary string   `json:"summary"`
	Detail  string   `json:"detail,omitempty"`
	Options []string `json:"options,omitempty"`
}

// openReply answers a gateway that follows a turn again: the questions
// still waiting for an answer, which it asks again in its chat.
type openReply struct {
	Questions []wireQuestion `json:"questions,omitempty"`
	// Taking says the turn's inbox takes messages there now.
	Taking bool `json:"taking,omitempty"`
}

// steerMessage is a message added to a running turn (core.Steering):
// Images are paths on the runner, of images uploaded into the turn's
// workdir. It is not sent again: a message not taken waits in the chat.
type steerMessage struct {
	Turn string `json:"turn"`
	// From is the message's author (core.Steering.From): the runner takes
	// it only into a turn of the same author (core.Turn.Author).
	From   string   `json:"from"`
	Prompt string   `json:"prompt"`
	Images []string `json:"images,omitempty"`
}

// toolCall is a call of an agent tool (core.TurnActions) that the CLI of
// a turn on a runner made to the bot's MCP server there: the gateway
// answers it with the turn's actions, checked again as a local turn's.
type toolCall struct {
	Tool     string   `json:"tool"`
	Path     string   `json:"path,omitempty"`
	Caption  string   `json:"caption,omitempty"`
	Text     string   `json:"text,omitempty"`
	Question string   `json:"question,omitempty"`
	Options  []string `json:"options,omitempty"`
	When     string   `json:"when,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// toolReply is a tool call's result, or the error for the agent to read.
type toolReply struct {
	Result string     `json:"result,omitempty"`
	Error  *wireError `json:"error,omitempty"`
}

// steerReply says whether the running turn took the message.
type steerReply struct {
	Taken bool       `json:"taken,omitempty"`
	Error *wireError `json:"error,omitempty"`
}

// cancelMessage stops a turn. The runner acknowledges it (an empty reply)
// whether the turn runs or not: the gateway sends it again until it does.
type cancelMessage struct {
	Turn string `json:"turn"`
}

// answerMessage answers a question of a turn, acknowledged as a cancel.
type answerMessage struct {
	Turn     string      `json:"turn"`
	Question string      `json:"question"`
	Answer   core.Answer `json:"answer"`
}

// validName reports whether s may be a runner's name: one subject token.
func validName(s string) bool {
	_, _, ok := core.SplitRunner(s + ":")
	return ok && !strings.ContainsAny(s, ".*> ")
}

package core

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"
)

// Runners places conversations on other machines, where the code is (the
// `jakebot runner` processes a gateway reaches over NATS). A conversation
// started in "name:path" works on runner name, whose own roots and access
// rules decide what path may be; turns there run with its CLIs.
//
// Admin says whether the user is an admin here: a runner lets an admin
// work in all of its roots and everyone else only in its default root, as
// the router does with its own.
type Runners interface {
	// Place is runner's machine: the runner checks each path against the
	// roots the user may work in there.
	Place(runner string, who Rights) Place
	// List describes the runners known, connected or not.
	List() []RunnerInfo
	// Unfinished hands over, once, the turns on runners that an earlier
	// process of this bot was streaming into platform's chats when it
	// stopped: they went on there, and their replies go on here.
	Unfinished(platform string) []UnfinishedTurn
}

// UnfinishedTurn is a turn still running on a runner (or finished there
// meanwhile) whose reply an earlier process of the bot did not finish.
type UnfinishedTurn struct {
	// Message is the message the turn answers.
	Message Message
	Runner  string
	// Plugin streams the rest of the turn: its Run follows the turn that
	// is already running and ignores the Turn it is given.
	Plugin Plugin
	// Abandon stops the turn there, for a conversation that ended or moved
	// meanwhile.
	Abandon func()
	// Side is the turn's Turn.Side as it started: empty for a turn of
	// the conversation's own agent, and for a turn recorded by a process
	// of before it was kept.
	Side json.RawMessage
	// NotStarted says the turn never started on its runner: the earlier
	// process stopped while it waited for the runner's answer to the
	// turn's start, and the runner had not taken it (nor will: it was
	// told to drop it). Nothing is followed; its chat is told the
	// message was lost, and offered to run it again when ByPerson (a
	// person wrote it, not a schedule or an agent).
	NotStarted bool
	ByPerson   bool
}

// ErrTurnGoesOn is the cause of a plugin's error when the bot shut down
// during a turn that goes on without it (on a runner): the next process
// of the bot follows it again (Runners.Unfinished).
var ErrTurnGoesOn = errors.New("the turn goes on without the bot")

// RunnerInfo is what /runners shows of one runner.
type RunnerInfo struct {
	Name     string
	Plugins  []string
	Roots    []string
	Online   bool
	LastSeen time.Time
}

// runnerName is the form of a runner's name in a workdir ("box2:~/src").
var runnerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)

// SplitRunner splits a workdir "runner:path" into its runner and path; ok
// is false for a workdir on this machine.
func SplitRunner(workdir string) (runner, path string, ok bool) {
	runner, path, ok = strings.Cut(workdir, ":")
	if !ok || !runnerName.MatchString(runner) {
		return "", workdir, false
	}
	return runner, path, true
}

package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// remoteWorkdir reports the runner and path of a workdir a user typed
// ("box2:~/src") on another machine, when runners are configured.
func (c *call) remoteWorkdir(workdir string) (runner, path string, ok bool) {
	r := c.r
	if r.cfg.Runners == nil {
		return "", workdir, false
	}
	return SplitRunner(workdir)
}

// remoteStart resolves a "runner:path" workdir for /<plugin> start or
// /workdir: the runner checks path against the roots m's author may work
// in there.
func (c *call) remoteStart(ctx context.Context, pluginID, runner, path string) (string, error) {
	place := c.r.runnerPlace(runner, c.who)
	if _, err := place.Plugin(pluginID, c.m); err != nil {
		return "", err
	}
	return place.Resolve(ctx, path)
}

// followUnfinished goes on with the replies of the turns on runners that
// an earlier process of the bot was streaming into a's chats: each runs
// as the turn it was, its conversation's agent's or a helper's
// (Turn.Side), with the rest of its events; the chat of one that never
// started there is told so. It returns the conversations whose turns it
// follows or told of.
func (r *Router) followUnfinished(a *attached) map[ConversationKey]bool {
	followed := map[ConversationKey]bool{}
	if r.cfg.Runners == nil {
		return followed
	}
	var notices []lostNotice
	for _, u := range r.cfg.Runners.Unfinished(a.p.Name()) {
		m := u.Message
		if u.NotStarted {
			// Its message's record (LocalTurns), if a killed process
			// left one, is this turn's: told once, here.
			followed[m.Key] = true
			r.logger.Warn("turn on a runner lost: the process stopped before the runner started it", "runner", u.Runner, "conversation", m.Key.String())
			notices = append(notices, notStartedNotice(u))
			continue
		}
		side, pair, err := readSide(u.Side)
		if err != nil {
			r.logger.Warn("turn on a runner abandoned", "runner", u.Runner, "conversation", m.Key.String(), "err", err)
			u.Abandon()
			continue
		}
		m.origin = OriginRunner
		if side != nil {
			// A helper's turn, or findings sent to the author, stays the
			// bot's on its person's behalf in every decision.
			m.origin = OriginHelper
		}
		conv, ok := r.convs.Get(m.Key)
		qm := queued{m: m, id: newID(), conv: conv, may: r.permitsOf(m), done: func() {}, follow: u.Plugin, side: side}
		if !ok || conv.Runner != u.Runner || qm.pluginOf(conv) != u.Plugin.ID() {
			r.logger.Info("turn on a runner abandoned: its conversation ended or moved", "runner", u.Runner, "conversation", m.Key.String())
			u.Abandon()
			continue
		}
		r.side.resumeLoop(m.Key, conv, side, pair)
		r.enqueue(a, qm, "")
		followed[m.Key] = true
	}
	go func() {
		for _, n := range notices {
			r.say(a, n.to, "", n.ans)
		}
	}()
	return followed
}

// cmdRunners answers /runners.
func cmdRunners(c *call) (string, error) {
	r := c.r
	if r.cfg.Runners == nil {
		return "Turns run on this machine only: NATS_URL is not set (README, Several machines).", nil
	}
	list := r.cfg.Runners.List()
	if len(list) == 0 {
		return "No runner has connected yet. Start one with `jakebot runner` on the machine where the code is.", nil
	}
	var b strings.Builder
	b.WriteString("Runners (start a conversation on one with /<plugin> start name:path):")
	for _, ri := range list {
		state := "online"
		if !ri.Online {
			state = "offline since " + ri.LastSeen.UTC().Format(time.DateTime) + " UTC"
		}
		fmt.Fprintf(&b, "\n- %s (%s): %s; roots %s", ri.Name, state, strings.Join(ri.Plugins, ", "), strings.Join(ri.Roots, ", "))
	}
	return b.String(), nil
}

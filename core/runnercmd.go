package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

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

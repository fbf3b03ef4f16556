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

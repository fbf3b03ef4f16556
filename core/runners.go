package core

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Runners places conversations on other machines, where the code is (the
// `jakebot runner` processes a gateway reaches over NATS). A conversation
// started in "name:path" works on runner name, whose own roots and access
// rules decide what path may be; turns there run with its CLIs.
type Runners interface {
	// Resolve asks runner to resolve path within its roots; it returns
	// the workdir there.
	Resolve(ctx context.Context, runner, path string) (string, error)
	// Plugin is pluginID as it runs on runner. It fails with a user error
	// when the runner is offline or does not have the plugin.
	Plugin(runner, pluginID string) (Plugin, error)
	// List describes the runners known, connected or not.
	List() []RunnerInfo
}

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

// remoteWorkdir reports the runner and path of a workdir on another
// machine, when runners are configured.
func (r *Router) remoteWorkdir(workdir string) (runner, path string, ok bool) {
	if r.cfg.Runners == nil {
		return "", workdir, false
	}
	return SplitRunner(workdir)
}

// remoteStart resolves a "runner:path" workdir for /<plugin> start: the
// runner checks path against its own roots.
func (r *Router) remoteStart(ctx context.Context, p Plugin, runner, path string, worktree *bool) (string, error) {
	if worktree != nil && *worktree {
		return "", Errorf("worktrees are made on this machine only; start on %s without --worktree", runner)
	}
	if _, err := r.cfg.Runners.Plugin(runner, p.ID()); err != nil {
		return "", err
	}
	wd, err := r.cfg.Runners.Resolve(ctx, runner, path)
	if err != nil {
		return "", err
	}
	return runner + ":" + wd, nil
}

// listRunners answers /runners.
func (r *Router) listRunners() string {
	if r.cfg.Runners == nil {
		return "Turns run on this machine only: NATS_URL is not set (README, Several machines)."
	}
	list := r.cfg.Runners.List()
	if len(list) == 0 {
		return "No runner has connected yet. Start one with `jakebot runner` on the machine where the code is."
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
	return b.String()
}

// errLocalOnly refuses what works only on this machine, for a
// conversation on a runner.
func errLocalOnly(what, runner string) error {
	return Errorf("%s works only for conversations on this machine; this one is on runner %s", what, runner)
}

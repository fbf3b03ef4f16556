package core

import (
	"context"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// placeOf is the machine conv works on, for a user of rights who.
func (r *Router) placeOf(conv Conversation, who Rights) Place {
	if conv.Runner != "" {
		return r.runnerPlace(conv.Runner, who)
	}
	return localPlace{r, who.Admin}
}

// runnerPlace is runner's machine; without NATS_URL, one that refuses
// everything (a conversation saved by a gateway that had it).
func (r *Router) runnerPlace(runner string, who Rights) Place {
	if r.cfg.Runners == nil {
		return unreachable(runner)
	}
	return r.cfg.Runners.Place(runner, who)
}

// localPlace is this machine, in the router's roots, for an admin or not.
type localPlace struct {
	r     *Router
	admin bool
}

func (p localPlace) Plugin(pluginID string, _ Message) (Plugin, error) {
	if pl, ok := p.r.cfg.Plugins.Get(pluginID); ok {
		return pl, nil
	}
	return nil, Errorf("plugin %q is no longer configured. Start a new conversation", pluginID)
}

func (p localPlace) Resolve(_ context.Context, path string) (string, error) {
	wd, err := p.r.here.spaceOf(p.admin).Resolve(path, "")
	return wd, WorkError(err)
}

func (p localPlace) Workdir(_ context.Context, stored string) (string, error) {
	return p.r.here.storedWorkdir(stored, p.admin)
}

func (p localPlace) Diff(ctx context.Context, workdir string, wt *gitrepo.Worktree) (gitrepo.Changes, error) {
	wd, err := p.r.here.storedWorkdir(workdir, p.admin)
	if err != nil {
		return gitrepo.Changes{}, err
	}
	c, err := p.r.here.spaceOf(p.admin).Diff(ctx, wd, wt)
	return c, WorkError(err)
}

func (p localPlace) ReadFile(_ context.Context, workdir, path string, max int64) (WorkFile, error) {
	wd, err := p.r.here.storedWorkdir(workdir, p.admin)
	if err != nil {
		return WorkFile{}, err
	}
	f, err := p.r.here.spaceOf(p.admin).ReadFile(path, wd, max)
	return f, WorkError(err)
}

func (p localPlace) NewWorktree(ctx context.Context, workdir, name string) (gitrepo.Worktree, string, error) {
	wt, wd, err := p.r.here.spaceOf(p.admin).NewWorktree(ctx, workdir, name)
	return wt, wd, WorkError(err)
}

func (p localPlace) Merge(ctx context.Context, wt gitrepo.Worktree, title string) (string, error) {
	msg, err := p.r.here.spaceOf(p.admin).Merge(ctx, wt, title)
	return msg, WorkError(err)
}

func (p localPlace) RemoveWorktree(ctx context.Context, wt gitrepo.Worktree) error {
	return WorkError(p.r.here.spaceOf(p.admin).RemoveWorktree(ctx, wt))
}

func (p localPlace) Upload(ctx context.Context, workdir string, files []UploadFile) ([]string, error) {
	now := p.r.clock.Now()
	paths, err := p.r.here.spaceOf(p.admin).SaveUploads(ctx, workdir, Day(now), now, files, p.r.logger)
	return paths, WorkError(err)
}

// conversationWorkdir resolves a conversation's stored workdir again, for
// m's author, each time it is used: a root narrowed since, a symlink
// swapped in later, or a writer who is not an admin in an admin's shared
// thread must not run, list or resume anything outside their policy.
func (r *Router) conversationWorkdir(m Message, conv Conversation) (string, error) {
	if conv.Runner != "" {
		return "", Errorf("that works only for conversations on this machine; this one is on runner %s", conv.Runner)
	}
	return r.here.storedWorkdir(conv.Workdir, r.cfg.Access.RightsOf(m).Admin)
}

// userWorkdir resolves a user's path for c's conversation, against its
// current workdir, and checks it (the current workdir, for an empty
// path) against c's author's roots.
func (c *call) userWorkdir(path string) (string, error) {
	r := c.r
	wd := r.here.defaultWorkdir()
	if c.hasConv && c.conv.Runner == "" {
		wd = c.conv.Workdir
	}
	space := r.here.spaceOf(c.who.Admin)
	if path != "" {
		var err error
		if wd, err = space.Resolve(path, wd); err != nil {
			return "", WorkError(err)
		}
	}
	if !space.Roots.Contains(wd) {
		return "", Errorf("workdir %q is outside %s; only admins may work in the other allowed roots", path, r.defaultRoot)
	}
	return wd, nil
}

// currentWorkdir is conversationWorkdir of c's conversation, or the
// default workdir when there is none.
func (c *call) currentWorkdir() (string, error) {
	if !c.hasConv {
		return c.r.here.defaultWorkdir(), nil
	}
	return c.r.conversationWorkdir(c.m, c.conv)
}

// userPlace resolves a path a user typed for c's conversation of
// pluginID: "runner:path" on that runner, any other here (userWorkdir).
// An empty path, in a conversation on a runner, is its workdir there.
func (c *call) userPlace(ctx context.Context, pluginID, path string) (runner, wd string, err error) {
	if c.hasConv && c.conv.Runner != "" && path == "" {
		path = c.conv.Shown(c.conv.Workdir)
	}
	if runner, rest, remote := c.remoteWorkdir(path); remote {
		wd, err = c.remoteStart(ctx, pluginID, runner, rest)
		return runner, wd, err
	}
	wd, err = c.userWorkdir(path)
	return "", wd, err
}

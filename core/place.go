package core

import (
	"context"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// Place is a machine where conversations work, this one or a runner
// (Runners.Place), narrowed to one user's Rights: the router gets one per
// use, for the author of the message it handles. Paths are the machine's
// own. It checks each against the roots the user may work in there (all
// of them for an admin) as it uses it, with the same rules
// (core/workspace) on every machine.
type Place interface {
	// Plugin is pluginID as it runs there for m's author. It fails with a
	// user error when it is not there (or the runner is offline).
	Plugin(pluginID string, m Message) (Plugin, error)
	// Resolve resolves path within the user's roots there.
	Resolve(ctx context.Context, path string) (string, error)
	// Workdir checks a conversation's stored workdir again for the user,
	// each time it is used: a root narrowed since, or a symlink swapped
	// in later, must not let a turn run outside their roots there.
	Workdir(ctx context.Context, stored string) (string, error)
	// Diff is what changed in workdir there (workspace.Space.Diff), in
	// worktree wt when not nil. A long patch may come cut short:
	// Changes.PatchSize says how long it is.
	Diff(ctx context.Context, workdir string, wt *gitrepo.Worktree) (gitrepo.Changes, error)
	// ReadFile reads path, relative to workdir, for /file
	// (workspace.Space.ReadFile).
	ReadFile(ctx context.Context, workdir, path string, max int64) (WorkFile, error)
	// NewWorktree makes a worktree of workdir's repository there
	// (workspace.Space.NewWorktree) and returns it and workdir's folder
	// in it. Outside a repository it fails with gitrepo.ErrNotARepo.
	NewWorktree(ctx context.Context, workdir, name string) (wt gitrepo.Worktree, worktreeWorkdir string, err error)
	// Merge merges wt, one of the bot's worktrees there.
	Merge(ctx context.Context, wt gitrepo.Worktree, title string) (string, error)
	// RemoveWorktree removes wt, one of the bot's worktrees there, if
	// nothing in it is unmerged.
	RemoveWorktree(ctx context.Context, wt gitrepo.Worktree) error
	// Upload saves files (each a copy here) in workdir's uploads folder
	// there (workspace.Space.SaveUploads), each under its name or a free
	// one like it: all or none. It returns their paths there, in order.
	Upload(ctx context.Context, workdir string, files []UploadFile) ([]string, error)
}

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

// unreachable is a runner this bot cannot reach: it reaches none.
type unreachable string

func (u unreachable) err() error {
	return Errorf("this conversation is on runner %s, and this bot reaches no runner: NATS_URL is not set", string(u))
}

func (u unreachable) Plugin(string, Message) (Plugin, error) { return nil, u.err() }

func (u unreachable) Resolve(context.Context, string) (string, error) { return "", u.err() }

func (u unreachable) Workdir(context.Context, string) (string, error) { return "", u.err() }

func (u unreachable) Diff(context.Context, string, *gitrepo.Worktree) (gitrepo.Changes, error) {
	return gitrepo.Changes{}, u.err()
}

func (u unreachable) ReadFile(context.Context, string, string, int64) (WorkFile, error) {
	return WorkFile{}, u.err()
}

func (u unreachable) NewWorktree(context.Context, string, string) (gitrepo.Worktree, string, error) {
	return gitrepo.Worktree{}, "", u.err()
}

func (u unreachable) Merge(context.Context, gitrepo.Worktree, string) (string, error) {
	return "", u.err()
}

func (u unreachable) RemoveWorktree(context.Context, gitrepo.Worktree) error { return u.err() }

func (u unreachable) Upload(context.Context, string, []UploadFile) ([]string, error) {
	return nil, u.err()
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

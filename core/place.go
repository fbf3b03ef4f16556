package core

import (
	"context"

	"github.com/jake-bot/jake-bot/core/gitrepo"
	"github.com/jake-bot/jake-bot/core/workspace"
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

// UploadFile is a file to save in a workdir: its name and its copy here.
type UploadFile = workspace.UploadFile

// WorkFile is a file /file sends (workspace.File).
type WorkFile = workspace.File

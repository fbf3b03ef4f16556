package workspace

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// NewWorktree makes worktree name of dir's repository (gitrepo.Create) in
// WorktreeDir/<repository's name> when that is set, else in the
// repository's .jakebot/worktrees, provided the repository and the
// worktree are inside s's roots. It returns the worktree and dir's folder
// in it. Outside a repository it fails with gitrepo.ErrNotARepo.
func (s Space) NewWorktree(ctx context.Context, dir, name string) (gitrepo.Worktree, string, error) {
	repo, err := s.Repo(ctx, dir)
	if err != nil {
		return gitrepo.Worktree{}, "", err
	}
	if err := gitrepo.CheckName(name); err != nil {
		return gitrepo.Worktree{}, "", err
	}
	parent := ""
	if s.WorktreeDir != "" {
		parent = filepath.Join(s.WorktreeDir, filepath.Base(repo.Main))
	}
	where := filepath.Join(cmp.Or(parent, filepath.Join(repo.Main, ".jakebot", "worktrees")), name)
	if !s.Roots.Contains(where) {
		return gitrepo.Worktree{}, "", refuse("the worktree would be %s, outside the directories you may work in (the repository is %s); set WORKTREE_DIR inside the allowed roots", where, repo.Top)
	}
	// Made here first, following no symlink: a repository holding
	// .jakebot as a link must not have a checkout made where it points.
	if parent != "" {
		// WORKTREE_DIR itself is the operator's: made as it is.
		if err = os.MkdirAll(s.WorktreeDir, 0o755); err == nil {
			_, err = mkdirsIn(s.WorktreeDir, filepath.Base(repo.Main))
		}
	} else {
		_, err = mkdirsIn(repo.Main, ".jakebot", "worktrees")
	}
	if err != nil {
		return gitrepo.Worktree{}, "", refuse("%w: no worktree is made there", err)
	}
	return s.git().Create(ctx, dir, name, parent)
}

// CheckWorktree refuses a worktree that is not one of the bot's inside
// s's roots: its repository inside them, and the worktree (if it is still
// there) a worktree of that repository with the branch its name gives
// checked out, as NewWorktree made it. A conversation's state, or a
// forged request to a runner, cannot have anything else merged or
// removed.
func (s Space) CheckWorktree(ctx context.Context, wt gitrepo.Worktree) error {
	main, err := s.Resolve(wt.Main, "")
	if err != nil {
		return err
	}
	if wt.Branch != gitrepo.BranchPrefix+filepath.Base(wt.Path) || main != wt.Main {
		return refuse("%s is not a worktree of the bot's", wt.Path)
	}
	if r, err := s.Repo(ctx, main); err != nil || r.Top != main || r.Main != main {
		return notWorktreeOf(wt.Path, main, err)
	}
	if _, err := os.Lstat(wt.Path); os.IsNotExist(err) {
		return nil // removed already: Remove only prunes what git remembers
	}
	path, err := s.Resolve(wt.Path, "")
	if err != nil {
		return err
	}
	if r, err := s.Repo(ctx, path); err != nil || path != wt.Path || r.Top != path || r.Main != main || path == main {
		return notWorktreeOf(wt.Path, main, err)
	}
	if branch, err := s.git().Branch(ctx, path); err != nil || branch != wt.Branch {
		return refuse("%s is not on branch %s", wt.Path, wt.Branch)
	}
	return nil
}

// notWorktreeOf refuses path as a worktree of main, saying why when the
// reason is a refusal of its own.
func notWorktreeOf(path, main string, err error) error {
	var ref *Refusal
	if errors.As(err, &ref) {
		return err
	}
	return refuse("%s is not a worktree of %s", path, main)
}

// Merge is gitrepo.Merge of wt, one of the bot's worktrees.
func (s Space) Merge(ctx context.Context, wt gitrepo.Worktree, message string) (string, error) {
	if err := s.CheckWorktree(ctx, wt); err != nil {
		return "", err
	}
	return s.git().Merge(ctx, wt, message)
}

// RemoveWorktree is gitrepo.Remove of wt, one of the bot's worktrees.
func (s Space) RemoveWorktree(ctx context.Context, wt gitrepo.Worktree) error {
	if err := s.CheckWorktree(ctx, wt); err != nil {
		return err
	}
	return s.git().Remove(ctx, wt)
}

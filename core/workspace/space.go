package workspace

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// Machine is one machine's folders: its allowed roots, the default
// workdir (whose root is the one users other than admins work in) and
// where worktrees go (WORKTREE_DIR; empty is each repository's
// .jakebot/worktrees).
type Machine struct {
	Roots          Roots
	DefaultWorkdir string
	WorktreeDir    string
}

// For is what a user, an admin or not, may reach of m.
func (m Machine) For(admin bool) Space {
	return Space{Roots: UserRoots(m.Roots, m.DefaultWorkdir, admin), All: m.Roots, WorktreeDir: m.WorktreeDir}
}

// Space is what one user may reach of one machine's folders.
type Space struct {
	// Roots are the folders the user may work in (UserRoots); All are
	// the machine's, which only say why a path is refused.
	Roots, All Roots
	// WorktreeDir is where worktrees go (WORKTREE_DIR); empty is each
	// repository's .jakebot/worktrees.
	WorktreeDir string
}

// git runs git in s: never above its roots.
func (s Space) git() gitrepo.Git { return gitrepo.Git{Ceiling: s.Roots.ceiling()} }

// Resolve turns a user's path (relative to base) into a real directory
// inside s's roots.
func (s Space) Resolve(path, base string) (string, error) {
	wd, err := s.Roots.Resolve(path, base)
	if err == nil {
		return wd, nil
	}
	if _, inAll := s.All.Resolve(path, base); inAll == nil && len(s.Roots) > 0 {
		return "", refuse("workdir %q is outside %s; only admins may work in the other allowed roots", path, s.Roots[0])
	}
	return "", err
}

// Repo finds the repository holding dir, and refuses one that reaches
// outside s's roots: its worktree's top, its main worktree and the folder
// its worktrees share must all be inside. Git finds a repository above a
// workdir (a home kept in git, a monorepo with one root per team), and a
// .git file may name one anywhere: the bot uses neither. Outside any
// repository it fails with gitrepo.ErrNotARepo.
func (s Space) Repo(ctx context.Context, dir string) (gitrepo.Repo, error) {
	r, err := s.git().Where(ctx, dir)
	if err != nil {
		return gitrepo.Repo{}, err
	}
	for _, p := range []string{r.Top, r.Main, r.Common} {
		// Where it reaches is not said: a path outside the user's roots.
		if real, err := filepath.EvalSymlinks(p); err != nil || !s.Roots.Contains(real) {
			return gitrepo.Repo{}, refuse("the git repository of %s reaches outside the directories you may work in: the bot does not use it", dir)
		}
	}
	return r, nil
}

// Diff is what changed in workdir (gitrepo.Diff), in worktree wt when not
// nil, which must be one of the bot's (CheckWorktree).
func (s Space) Diff(ctx context.Context, workdir string, wt *gitrepo.Worktree) (gitrepo.Changes, error) {
	var err error
	if wt != nil {
		err = s.CheckWorktree(ctx, *wt)
	} else {
		_, err = s.Repo(ctx, workdir)
	}
	if err != nil {
		return gitrepo.Changes{}, err
	}
	return s.git().Diff(ctx, workdir, wt)
}

// Exclude adds the bot's folder to the info/exclude of the repository
// holding workdir (gitrepo.Exclude), if there is one inside s's roots.
func (s Space) Exclude(ctx context.Context, workdir string) error {
	_, err := s.Repo(ctx, workdir)
	if errors.Is(err, gitrepo.ErrNotARepo) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.git().Exclude(ctx, workdir)
}

package core

import (
	"errors"
	"fmt"

	"github.com/jake-bot/jake-bot/core/gitrepo"
	"github.com/jake-bot/jake-bot/core/workspace"
)

// Roots is the set of directories workdirs must stay inside
// (workspace.Roots).
type Roots = workspace.Roots

// NewRoots resolves each root (workspace.NewRoots).
func NewRoots(paths []string) (Roots, error) { return workspace.NewRoots(paths) }

// ErrNoSuchDir is the cause of the error for a workdir or file that does
// not exist.
var ErrNoSuchDir = workspace.ErrNoSuchDir

// space is what m's author may reach of this machine's folders.
func (r *Router) space(m Message) workspace.Space {
	return r.spaceOf(r.isAdmin(m))
}

func (r *Router) spaceOf(admin bool) workspace.Space {
	return workspace.Machine{Roots: r.cfg.Roots, DefaultWorkdir: r.cfg.DefaultWorkdir, WorktreeDir: r.cfg.WorktreeDir}.For(admin)
}

// WorkError shows the workspace's and git's refusals, and a workdir
// outside any repository, to the user; other errors are left as they are.
func WorkError(err error) error {
	var ref *gitrepo.Refusal
	switch {
	case err == nil || IsUserError(err):
		return err
	case errors.As(err, &ref):
		return &UserError{Msg: ref.Msg, Err: err}
	case errors.Is(err, gitrepo.ErrNotARepo):
		return &UserError{Msg: "this conversation's workdir is not in a git repository", Err: err}
	}
	return fmt.Errorf("workdir: %w", err)
}

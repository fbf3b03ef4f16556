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

// machine is this machine's folders as the router's settings give them:
// the space each kind of user may reach, the default workdir, and a
// conversation's stored workdir checked again.
type machine struct {
	workspace.Machine
	// defaultRoot is the root users who are not admins work in.
	defaultRoot string
}

// spaceOf is what a user who is an admin, or not, may reach.
func (h machine) spaceOf(admin bool) workspace.Space { return h.For(admin) }

// defaultWorkdir is where /start without a path begins.
func (h machine) defaultWorkdir() string {
	if h.DefaultWorkdir != "" {
		return h.DefaultWorkdir
	}
	return h.Roots[0]
}

// storedWorkdir is conversationWorkdir of a workdir here, for a user who
// is an admin or not.
func (h machine) storedWorkdir(stored string, admin bool) (string, error) {
	wd, err := h.Roots.Resolve(stored, "")
	if err != nil {
		return "", Errorf("this conversation's workdir is no longer allowed: %v. Start a new conversation", err)
	}
	if !h.spaceOf(admin).Roots.Contains(wd) {
		return "", Errorf("this conversation works in %s, outside %s; only admins may work in the other allowed roots", wd, h.defaultRoot)
	}
	return wd, nil
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

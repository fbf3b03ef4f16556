// Package workspace is what the bot does in the folders users work in,
// on whichever machine they are (the bot's own, or a runner's): resolve
// a workdir inside the allowed roots, show what changed, read a file,
// save the files sent with a message, make, merge and remove a
// conversation's worktree. Each operation checks what it touches against
// the roots the user may work in, with one set of rules for every
// machine. It runs git through gitrepo and knows nothing of chats:
// refusals are *gitrepo.Refusal, their message meant for the user.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// Refusal is an expected reason not to do something; its message is
// meant for the user. It is gitrepo's: one type for every such reason.
type Refusal = gitrepo.Refusal

// refuse returns a Refusal with a formatted message; a %w verb wraps its
// cause, as fmt.Errorf does.
func refuse(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &Refusal{Msg: err.Error(), Err: errors.Unwrap(err)}
}

// Roots is the set of directories workdirs must stay inside. Each root is
// stored resolved (absolute, cleaned, symlinks evaluated).
type Roots []string

// NewRoots resolves each root. A root that does not exist is an error: a
// misconfigured root must fail at start-up, not at the first /start.
func NewRoots(paths []string) (Roots, error) {
	var rs Roots
	for _, p := range paths {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		real, err := realPath(p, "")
		if err != nil {
			return nil, fmt.Errorf("allowed root %q: %w", p, err)
		}
		rs = append(rs, real)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("no allowed roots")
	}
	return rs, nil
}

// Resolve turns a user's path into a real directory inside the roots. A
// relative path is taken from base (or the first root when base is empty);
// "~" is the user's home. Symlinks are resolved before the check, so a link
// inside a root that points outside it is refused.
func (rs Roots) Resolve(path, base string) (string, error) {
	if base == "" && len(rs) > 0 {
		base = rs[0]
	}
	real, err := realPath(path, base)
	if err != nil {
		return "", refuse("workdir %q: %w (allowed roots: %s)", path, err, strings.Join(rs, ", "))
	}
	if !rs.Contains(real) {
		return "", refuse("workdir %q is outside the allowed roots (%s)", path, strings.Join(rs, ", "))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", refuse("workdir %q: %v", path, err)
	}
	if !fi.IsDir() {
		return "", refuse("workdir %q is not a directory", path)
	}
	return real, nil
}

// Contains reports whether the resolved path is one of the roots or lies
// below one.
func (rs Roots) Contains(real string) bool { return rs.holding(real) != "" }

// holding is the root that real is or lies below, "" if none.
func (rs Roots) holding(real string) string {
	for _, r := range rs {
		if real == r || strings.HasPrefix(real, r+string(filepath.Separator)) || r == string(filepath.Separator) {
			return r
		}
	}
	return ""
}

// ceiling is the folders just above the roots, not themselves inside
// one: git looks for a repository in a root and below, never above.
func (rs Roots) ceiling() []string {
	var dirs []string
	for _, r := range rs {
		if up := filepath.Dir(r); up != r && !rs.Contains(up) {
			dirs = append(dirs, up)
		}
	}
	return dirs
}

// UserRoots returns the roots a user may work in: all of roots for an
// admin, the default root for everyone else. Every machine applies the
// same rule with it, each to its own roots.
func UserRoots(roots Roots, defaultWorkdir string, admin bool) Roots {
	if admin || len(roots) == 0 {
		return roots
	}
	return Roots{DefaultRoot(roots, defaultWorkdir)}
}

// DefaultRoot is the root non-admins are kept in: the one holding the
// default workdir, else the first.
func DefaultRoot(roots Roots, defaultWorkdir string) string {
	if len(roots) == 0 {
		return ""
	}
	for _, root := range roots {
		if defaultWorkdir != "" && (Roots{root}).Contains(defaultWorkdir) {
			return root
		}
	}
	return roots[0]
}

// ErrNoSuchDir is the cause of the error for a workdir or file that does
// not exist.
var ErrNoSuchDir = errors.New("no such directory")

func realPath(path, base string) (string, error) {
	if path == "~" || strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expand ~: %w", err)
		}
		path = filepath.Join(home, path[1:])
	}
	if !filepath.IsAbs(path) {
		if base == "" {
			wd, err := os.Getwd()
			if err != nil {
				return "", err
			}
			base = wd
		}
		path = filepath.Join(base, path)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		if os.IsNotExist(err) {
			return "", ErrNoSuchDir
		}
		return "", err
	}
	return real, nil
}

package core

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

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
		return "", Errorf("workdir %q: %w (allowed roots: %s)", path, err, strings.Join(rs, ", "))
	}
	if !rs.Contains(real) {
		return "", Errorf("workdir %q is outside the allowed roots (%s)", path, strings.Join(rs, ", "))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", Errorf("workdir %q: %v", path, err)
	}
	if !fi.IsDir() {
		return "", Errorf("workdir %q is not a directory", path)
	}
	return real, nil
}

// Contains reports whether the resolved path is one of the roots or lies
// below one.
func (rs Roots) Contains(real string) bool {
	for _, r := range rs {
		if real == r || strings.HasPrefix(real, r+string(filepath.Separator)) || r == string(filepath.Separator) {
			return true
		}
	}
	return false
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

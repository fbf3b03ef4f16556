package workspace_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/core/gitrepo"
	"github.com/jake-bot/jake-bot/core/workspace"
)

// Git looks for a workdir's repository no higher than the user's roots
// (GIT_CEILING_DIRECTORIES): a repository above them is not found at all,
// while one that is itself a root, or inside another of the user's roots,
// is.
func TestGitStopsAtTheRoots(t *testing.T) {
	t.Parallel()
	outer := tempDir(t)
	if out, err := exec.Command("git", "-C", outer, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	root := filepath.Join(outer, "root")
	proj := filepath.Join(root, "proj")
	mkdirAll(t, proj)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		roots workspace.Roots
		found bool
	}{
		{"a repository above the root", workspace.Roots{root}, false},
		{"a repository that is another of the roots", workspace.Roots{root, outer}, true},
		{"a repository that is the root", workspace.Roots{outer}, true},
	} {
		r, err := workspace.Space{Roots: tc.roots}.Repo(ctx, proj)
		switch {
		case tc.found && (err != nil || r.Top != outer):
			t.Errorf("%s: Repo = %+v, %v; want %s", tc.name, r, err, outer)
		case !tc.found && !errors.Is(err, gitrepo.ErrNotARepo):
			t.Errorf("%s: Repo = %+v, %v; want ErrNotARepo", tc.name, r, err)
		}
	}
}

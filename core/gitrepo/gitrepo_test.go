package gitrepo_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// anywhere runs git with no ceiling.
var anywhere gitrepo.Git

// newRepo returns a repository with one commit of a.txt, on branch main.
func newRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "one\ntwo\nthree\n")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "src", "main.go"), "package main\n")
	run(t, dir, "add", ".")
	run(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func refusal(err error) string {
	var r *gitrepo.Refusal
	if errors.As(err, &r) {
		return r.Msg
	}
	return ""
}

func TestCreateDiffMergeRemove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	wt, workdir, err := anywhere.Create(ctx, filepath.Join(repo, "src"), "fix-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(repo, ".jakebot", "worktrees", "fix-1"); wt.Path != want || workdir != filepath.Join(want, "src") ||
		wt.Branch != "jakebot/fix-1" || wt.Main != repo {
		t.Fatalf("Create = %+v, %q", wt, workdir)
	}
	if !regexp.MustCompile(`(?m)^\.jakebot/$`).MatchString(read(t, filepath.Join(repo, ".git", "info", "exclude"))) {
		t.Error(".jakebot/ not excluded")
	}
	if out := run(t, repo, "status", "--porcelain"); out != "" {
		t.Errorf("the main worktree shows %q after Create", out)
	}
	// Seen from inside the worktree, its main worktree is the repository.
	if top, main, err := anywhere.Top(ctx, workdir); err != nil || top != wt.Path || main != repo {
		t.Errorf("Top(worktree) = %q, %q, %v", top, main, err)
	}

	// A commit, a pending edit and a new file all show.
	write(t, filepath.Join(wt.Path, "a.txt"), "one\nTWO\nthree\n")
	run(t, wt.Path, "commit", "-q", "-am", "two")
	write(t, filepath.Join(wt.Path, "src", "main.go"), "package main\n\nfunc main() {}\n")
	write(t, filepath.Join(wt.Path, "new.txt"), "new\n")
	c, err := anywhere.Diff(ctx, workdir, &wt)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a.txt", "src/main.go", "new.txt", "3 files changed"} {
		if !strings.Contains(c.Stat, want) {
			t.Errorf("stat lacks %q:\n%s", want, c.Stat)
		}
	}
	for _, want := range []string{"-two\n+TWO", "+func main() {}", "+new"} {
		if !strings.Contains(c.Patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, c.Patch)
		}
	}

	msg, err := anywhere.Merge(ctx, wt, "fix the second line")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "Merged jakebot/fix-1 into main") {
		t.Errorf("Merge = %q", msg)
	}
	if got := read(t, filepath.Join(repo, "new.txt")); got != "new\n" {
		t.Errorf("main worktree's new.txt = %q", got)
	}
	if log := run(t, repo, "log", "--format=%s", "-3"); !strings.Contains(log, "fix the second line") || !strings.Contains(log, "Merge jakebot/fix-1") {
		t.Errorf("log = %q", log)
	}
	// Merged: nothing left to diff, merge or keep.
	if c, err := anywhere.Diff(ctx, workdir, &wt); err != nil || c.Patch != "" {
		t.Errorf("Diff after the merge = %+v, %v", c, err)
	}
	if msg, err := anywhere.Merge(ctx, wt, "again"); err != nil || !strings.HasPrefix(msg, "Nothing to merge") {
		t.Errorf("Merge again = %q, %v", msg, err)
	}
	if err := anywhere.Remove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Errorf("worktree still there: %v", err)
	}
	if out := run(t, repo, "branch", "--list", "jakebot/*"); out != "" {
		t.Errorf("branches left: %q", out)
	}
}

func TestMergeRefusesAndChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	wt, _, err := anywhere.Create(ctx, repo, "edit", "")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(wt.Path, "a.txt"), "one\nfrom the worktree\nthree\n")

	// Uncommitted changes in the main worktree: refused, naming the file.
	write(t, filepath.Join(repo, "src", "main.go"), "package changed\n")
	_, err = anywhere.Merge(ctx, wt, "edit")
	if msg := refusal(err); !strings.Contains(msg, "uncommitted changes in src/main.go") {
		t.Fatalf("Merge with a dirty main = %v", err)
	}
	run(t, repo, "checkout", "--", "src/main.go")

	// A conflicting commit on main: refused, naming the file, nothing changed.
	write(t, filepath.Join(repo, "a.txt"), "one\nfrom main\nthree\n")
	run(t, repo, "commit", "-q", "-am", "main's edit")
	head := run(t, repo, "rev-parse", "HEAD")
	_, err = anywhere.Merge(ctx, wt, "edit")
	if msg := refusal(err); !strings.Contains(msg, "would conflict in a.txt") {
		t.Fatalf("conflicting Merge = %v", err)
	}
	if got := run(t, repo, "rev-parse", "HEAD"); got != head {
		t.Error("the main worktree's HEAD moved")
	}
	if out := run(t, repo, "status", "--porcelain"); out != "" {
		t.Errorf("the main worktree shows %q after a refused merge", out)
	}
	// Nor did the worktree change: its edit is pending still, so the
	// worktree is kept.
	if out := run(t, wt.Path, "status", "--porcelain"); out != " M a.txt\n" {
		t.Errorf("worktree status %q after a refused merge, want a.txt pending", out)
	}
	err = anywhere.Remove(ctx, wt)
	if msg := refusal(err); !strings.Contains(msg, "is kept: it has 1 changed files not committed and 0 commits not merged") ||
		!strings.Contains(msg, "worktree remove --force") {
		t.Fatalf("Remove = %v", err)
	}
	if _, err := os.Stat(wt.Path); err != nil {
		t.Errorf("a kept worktree was removed: %v", err)
	}
}

func TestCreateRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	if _, _, err := anywhere.Create(ctx, repo, "x", ""); err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	empty := t.TempDir()
	run(t, empty, "init", "-q")
	for _, tc := range []struct{ dir, name, want string }{
		{repo, "x", "branch jakebot/x already exists"},
		{repo, "../up", "is not a worktree name"},
		{repo, "-rf", "is not a worktree name"},
		{empty, "y", "has no commit yet"},
	} {
		if _, _, err := anywhere.Create(ctx, tc.dir, tc.name, ""); !strings.Contains(refusal(err), tc.want) {
			t.Errorf("Create(%s) = %v, want a refusal with %q", tc.name, err, tc.want)
		}
	}
	if _, _, err := anywhere.Create(ctx, plain, "z", ""); !errors.Is(err, gitrepo.ErrNotARepo) {
		t.Errorf("Create outside a repository = %v, want ErrNotARepo", err)
	}
}

func TestWorktreeDirElsewhere(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	parent := filepath.Join(t.TempDir(), "trees")
	wt, workdir, err := anywhere.Create(context.Background(), repo, "away", parent)
	if err != nil {
		t.Fatal(err)
	}
	if wt.Path != filepath.Join(parent, "away") || workdir != wt.Path {
		t.Errorf("Create = %+v, %q", wt, workdir)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, ".git", "info", "exclude")); strings.Contains(string(data), ".jakebot") {
		t.Error(".jakebot/ excluded though no worktree is in the repository")
	}
}

func TestDiffOfAPlainCheckout(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	write(t, filepath.Join(repo, "a.txt"), "one\n")
	write(t, filepath.Join(repo, "untracked.txt"), "?\n")
	c, err := anywhere.Diff(context.Background(), filepath.Join(repo, "src"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Stat, "a.txt") || !strings.Contains(c.Stat, "New files git does not track yet: untracked.txt") ||
		!strings.Contains(c.Patch, "-two") || c.Since != "HEAD" {
		t.Errorf("Diff = %+v", c)
	}
	if out := run(t, repo, "status", "--porcelain"); !strings.Contains(out, "?? untracked.txt") {
		t.Errorf("Diff of a plain checkout changed its index: %q", out)
	}
}

// A merge that would overwrite files the main worktree does not track, be
// they untracked or ignored, is refused before anything changes, naming
// them: no commit on the branch, the worktree's changes still pending.
func TestMergeRefusesToOverwriteUntrackedFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	wt, _, err := anywhere.Create(ctx, repo, "add", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b.txt", ".env", filepath.Join("docs", "guide.md"), "a.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(wt.Path, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(wt.Path, name), "from the worktree\n")
	}
	run(t, wt.Path, "add", "-f", ".env") // tracked on the branch, ignored in main
	write(t, filepath.Join(repo, ".git", "info", "exclude"), ".env\n.jakebot/\n")
	write(t, filepath.Join(repo, "b.txt"), "the user's own\n")
	write(t, filepath.Join(repo, ".env"), "SECRET=mine\n")
	write(t, filepath.Join(repo, "docs"), "a file where the branch has a folder\n")
	branch := run(t, repo, "rev-parse", wt.Branch)
	head := run(t, repo, "rev-parse", "HEAD")

	_, err = anywhere.Merge(ctx, wt, "add files")
	msg := refusal(err)
	if !strings.Contains(msg, "would overwrite .env, b.txt, docs/guide.md in the main worktree "+repo+", which git does not track: nothing was changed") {
		t.Fatalf("Merge over untracked files = %v", err)
	}
	if got := run(t, repo, "rev-parse", wt.Branch); got != branch {
		t.Error("the branch moved: the pending changes were committed")
	}
	if got := run(t, repo, "rev-parse", "HEAD"); got != head {
		t.Error("the main worktree's HEAD moved")
	}
	if got := run(t, wt.Path, "status", "--porcelain"); got != "A  .env\n M a.txt\n?? b.txt\n?? docs/\n" {
		t.Errorf("worktree status %q after a refused merge, want its changes pending as they were", got)
	}
	if got := read(t, filepath.Join(repo, ".env")); got != "SECRET=mine\n" {
		t.Errorf("the ignored .env = %q", got)
	}

	for _, name := range []string{"b.txt", ".env", "docs"} {
		if err := os.Remove(filepath.Join(repo, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := anywhere.Merge(ctx, wt, "add files"); err != nil {
		t.Fatalf("Merge once the way is clear: %v", err)
	}
	if got := read(t, filepath.Join(repo, "docs", "guide.md")); got != "from the worktree\n" {
		t.Errorf("merged docs/guide.md = %q", got)
	}
}

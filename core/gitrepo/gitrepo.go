// Package gitrepo gives a conversation a git worktree of its own, and
// shows and merges what it changed. It runs the git CLI (2.38 or later,
// for merge-tree --write-tree) and knows nothing of chats: the router
// calls it and words the results.
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// BranchPrefix starts the name of every branch the bot creates.
const BranchPrefix = "jakebot/"

// timeout bounds one git command: a hung git (a lock, a hook) must not
// hold a chat command forever.
const timeout = time.Minute

// ErrNotARepo is returned for a directory outside any git repository.
var ErrNotARepo = errors.New("not in a git repository")

// Refusal is an expected reason not to do something (a conflict, pending
// changes, a name taken, a path outside the roots): its message is meant
// for the user. Err, if set, is its cause, for errors.Is.
type Refusal struct {
	Msg string
	Err error
}

func (r *Refusal) Error() string { return r.Msg }

func (r *Refusal) Unwrap() error { return r.Err }

// Git runs git for the bot. Its zero value lets git look for a
// repository in every folder above the one it runs in.
type Git struct {
	// Ceiling lists folders git never climbs into looking for a
	// repository (GIT_CEILING_DIRECTORIES): the folders just above the
	// user's roots, so that a home or a monorepo kept in git above them
	// is not taken for the workdir's repository.
	Ceiling []string
}

func refuse(format string, args ...any) error { return &Refusal{Msg: fmt.Sprintf(format, args...)} }

// Worktree is a conversation's worktree: where it is, its branch, and the
// repository's main worktree it came from (where /merge merges into).
type Worktree struct {
	Path   string
	Branch string
	Main   string
}

// locks serialises git commands per repository: two conversations'
// commands at once would fight over index.lock.
var locks sync.Map // main worktree path -> *sync.Mutex

func lock(repo string) func() {
	m, _ := locks.LoadOrStore(repo, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// git runs git in dir and returns its standard output. An error carries
// git's own message. Nothing the repository configures runs (see
// hardened).
func (g Git) git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env, err := g.hardened(ctx, dir)
	if err != nil {
		return "", err
	}
	return runGit(ctx, dir, env, args...)
}

func runGit(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return out.String(), fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return out.String(), nil
}

// Repo is where a repository is, as git finds it from a folder.
type Repo struct {
	// Top is the top of the worktree holding the folder; Main the
	// repository's main worktree (Top for a plain checkout); Common the
	// folder of what its worktrees share (the main worktree's .git).
	Top, Main, Common string
}

// Where finds the repository holding dir.
func (g Git) Where(ctx context.Context, dir string) (Repo, error) {
	out, err := g.git(ctx, dir, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
	if err != nil {
		if strings.Contains(err.Error(), "not a git repository") {
			return Repo{}, ErrNotARepo
		}
		return Repo{}, err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		return Repo{}, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	r := Repo{Top: lines[0], Common: filepath.Clean(lines[1])}
	r.Main = filepath.Dir(r.Common)
	if filepath.Base(r.Common) != ".git" {
		r.Main = r.Top // a bare or unusual layout: treat the checkout as its own
	}
	return r, nil
}

// Top returns the top of the worktree holding dir, and the repository's
// main worktree (the same for a plain checkout).
func (g Git) Top(ctx context.Context, dir string) (top, main string, err error) {
	r, err := g.Where(ctx, dir)
	return r.Top, r.Main, err
}

// Branch returns the branch checked out in dir's worktree, and an error
// when it is on none (a detached HEAD).
func (g Git) Branch(ctx context.Context, dir string) (string, error) {
	out, err := g.git(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return "", fmt.Errorf("%s is on no branch: %w", dir, err)
	}
	return strings.TrimSpace(out), nil
}

// nameRE is what a worktree's name may be: it becomes a directory and a
// branch name.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$`)

// CheckName refuses a worktree name that is not a plain word.
func CheckName(name string) error {
	if !nameRE.MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") {
		return refuse("%q is not a worktree name: use letters, digits, '.', '_' and '-'", name)
	}
	return nil
}

// Create adds a worktree named name for the repository holding dir, on a
// new branch jakebot/<name> from the repository's current HEAD. It lives
// in parent/<name>; an empty parent means <repository>/.jakebot/worktrees,
// which is added to the repository's info/exclude. The returned workdir
// is dir's folder in the new worktree.
func (g Git) Create(ctx context.Context, dir, name, parent string) (wt Worktree, workdir string, err error) {
	if err := CheckName(name); err != nil {
		return Worktree{}, "", err
	}
	top, main, err := g.Top(ctx, dir)
	if err != nil {
		return Worktree{}, "", err
	}
	defer lock(main)()
	if _, err := g.git(ctx, main, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		return Worktree{}, "", refuse("the repository at %s has no commit yet: commit something before starting a worktree", main)
	}
	branch := BranchPrefix + name
	if _, err := g.git(ctx, main, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		return Worktree{}, "", refuse("branch %s already exists: pick another name, or delete it with git branch -D %s", branch, branch)
	}
	if parent == "" {
		parent = filepath.Join(main, ".jakebot", "worktrees")
		if err := g.exclude(ctx, main, botFolder); err != nil {
			return Worktree{}, "", err
		}
	}
	path := filepath.Join(parent, name)
	if _, err := os.Lstat(path); err == nil {
		return Worktree{}, "", refuse("%s already exists: pick another worktree name", path)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Worktree{}, "", fmt.Errorf("worktree folder: %w", err)
	}
	if _, err := g.git(ctx, top, "worktree", "add", "-b", branch, path, "HEAD"); err != nil {
		return Worktree{}, "", err
	}
	rel, err := filepath.Rel(top, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	workdir = filepath.Join(path, rel)
	if _, err := os.Stat(workdir); err != nil {
		workdir = path // a folder git does not track (empty, or ignored)
	}
	return Worktree{Path: path, Branch: branch, Main: main}, workdir, nil
}

// exclude adds pattern to the repository's info/exclude unless it is there.
func (g Git) exclude(ctx context.Context, repo, pattern string) error {
	out, err := g.git(ctx, repo, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return err
	}
	path := strings.TrimSpace(out)
	if !filepath.IsAbs(path) {
		path = filepath.Join(repo, path)
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if slices.Contains(strings.Split(string(data), "\n"), pattern) {
		return nil
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, pattern+"\n"...)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// botFolder is the info/exclude pattern of the bot's own folder. It is not
// anchored: a conversation may work in a subdirectory of the repository,
// and its uploads go to a .jakebot/ there.
const botFolder = ".jakebot/"

// Exclude adds the bot's own folder, .jakebot/, wherever it is, to the
// info/exclude of the repository holding dir, if there is one.
func (g Git) Exclude(ctx context.Context, dir string) error {
	_, main, err := g.Top(ctx, dir)
	if errors.Is(err, ErrNotARepo) {
		return nil
	}
	if err != nil {
		return err
	}
	defer lock(main)()
	return g.exclude(ctx, main, botFolder)
}

// Changes is what a conversation changed.
type Changes struct {
	// Stat is git diff --stat's summary; Patch the whole diff. Both are
	// empty when nothing changed.
	Stat, Patch string
	// Since says against what: "jakebot/x's branch point" or "HEAD".
	Since string
	// PatchSize, when over len(Patch), is the length of the whole patch,
	// of which Patch is the start (cut short to travel from a runner).
	PatchSize int
}

// Cut reports whether Patch holds only the start of the patch.
func (c Changes) Cut() bool { return c.PatchSize > len(c.Patch) }

// Diff returns what changed in dir: in a worktree of the bot's, all since
// its branch left the main worktree's branch, committed or not, new files
// included; elsewhere, the working tree and index against HEAD (new files
// are listed by name: git does not diff what it does not track).
func (g Git) Diff(ctx context.Context, dir string, wt *Worktree) (Changes, error) {
	if wt != nil {
		defer lock(wt.Main)()
		base, err := g.branchPoint(ctx, *wt)
		if err != nil {
			return Changes{}, err
		}
		// Intent-to-add puts new files in the diff; the worktree is the
		// conversation's own, so its index may change.
		if _, err := g.git(ctx, wt.Path, "add", "--intent-to-add", "--all"); err != nil {
			return Changes{}, err
		}
		return g.diff(ctx, wt.Path, base, wt.Branch+"'s branch point")
	}
	top, main, err := g.Top(ctx, dir)
	if err != nil {
		return Changes{}, err
	}
	defer lock(main)()
	c, err := g.diff(ctx, top, "HEAD", "HEAD")
	if err != nil {
		return Changes{}, err
	}
	untracked, err := g.git(ctx, top, "ls-files", "--others", "--exclude-standard")
	if err != nil {
		return Changes{}, err
	}
	if u := strings.Fields(untracked); len(u) > 0 {
		c.Stat = strings.TrimRight(c.Stat+"\nNew files git does not track yet: "+strings.Join(u, ", "), "\n")
		c.Stat = strings.TrimLeft(c.Stat, "\n")
	}
	return c, nil
}

func (g Git) diff(ctx context.Context, dir, base, since string) (Changes, error) {
	stat, err := g.git(ctx, dir, "diff", noSubmodules, "--stat", "--no-color", "--no-ext-diff", "--no-textconv", base)
	if err != nil {
		return Changes{}, err
	}
	patch, err := g.git(ctx, dir, "diff", noSubmodules, "--no-color", "--no-ext-diff", "--no-textconv", base)
	if err != nil {
		return Changes{}, err
	}
	return Changes{Stat: strings.TrimRight(stat, "\n"), Patch: patch, Since: since}, nil
}

// branchPoint is where wt's branch and the main worktree's HEAD last met.
func (g Git) branchPoint(ctx context.Context, wt Worktree) (string, error) {
	out, err := g.git(ctx, wt.Main, "merge-base", "HEAD", wt.Branch)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// pending lists dir's files with changes not committed; untracked files
// count only when withNew.
func (g Git) pending(ctx context.Context, dir string, withNew bool) ([]string, error) {
	mode := "--untracked-files=no"
	if withNew {
		mode = "--untracked-files=all"
	}
	out, err := g.git(ctx, dir, "status", noSubmodules, "--porcelain", mode)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 3 {
			files = append(files, l[3:])
		}
	}
	return files, nil
}

// Remove removes wt and its branch when nothing in it is unmerged: no
// pending change, no commit the main worktree's branch lacks. Otherwise it
// keeps both and returns a Refusal saying what is left and how to remove
// it by hand.
func (g Git) Remove(ctx context.Context, wt Worktree) error {
	defer lock(wt.Main)()
	if _, err := os.Stat(wt.Path); errors.Is(err, os.ErrNotExist) {
		_, _ = g.git(ctx, wt.Main, "worktree", "prune")
		return nil
	}
	dirty, err := g.pending(ctx, wt.Path, true)
	if err != nil {
		return err
	}
	ahead, err := g.git(ctx, wt.Main, "rev-list", "--count", "HEAD.."+wt.Branch)
	if err != nil {
		return err
	}
	if len(dirty) > 0 || strings.TrimSpace(ahead) != "0" {
		what := fmt.Sprintf("%s commits not merged", strings.TrimSpace(ahead))
		if len(dirty) > 0 {
			what = fmt.Sprintf("%d changed files not committed and %s", len(dirty), what)
		}
		return refuse("The worktree %s (branch %s) is kept: it has %s. /merge them first, or remove it by hand: git -C %s worktree remove --force %s && git -C %s branch -D %s",
			wt.Path, wt.Branch, what, wt.Main, wt.Path, wt.Main, wt.Branch)
	}
	if _, err := g.git(ctx, wt.Main, "worktree", "remove", wt.Path); err != nil {
		return err
	}
	_, err = g.git(ctx, wt.Main, "branch", "-d", wt.Branch)
	return err
}

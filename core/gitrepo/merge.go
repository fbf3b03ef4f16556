package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Merge commits what is pending in wt (with message) and merges its
// branch into the branch checked out in the main worktree. It changes
// nothing, and says why, when the main worktree has uncommitted changes
// or is not on a branch, or when the merge would conflict or overwrite
// files the main worktree does not track.
func (g Git) Merge(ctx context.Context, wt Worktree, message string) (string, error) {
	defer lock(wt.Main)()
	target, err := g.git(ctx, wt.Main, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return "", refuse("the main worktree %s is not on a branch (detached HEAD): check one out to merge into", wt.Main)
	}
	target = strings.TrimSpace(target)
	if dirty, err := g.pending(ctx, wt.Main, false); err != nil {
		return "", err
	} else if len(dirty) > 0 {
		return "", refuse("the main worktree %s has uncommitted changes in %s: commit or stash them, then /merge again", wt.Main, strings.Join(dirty, ", "))
	}
	// What is pending becomes a commit nothing points to yet: the branch
	// moves to it only once the merge is known to go through.
	tip, unstage, err := g.pendingCommit(ctx, wt, message)
	if err != nil {
		return "", err
	}
	ahead, err := g.git(ctx, wt.Main, "rev-list", "--count", "HEAD.."+tip)
	if err != nil {
		unstage()
		return "", err
	}
	if strings.TrimSpace(ahead) == "0" {
		unstage()
		return "Nothing to merge: " + wt.Branch + " has nothing " + target + " lacks.", nil
	}
	if err := g.checkMerge(ctx, wt, target, tip); err != nil {
		unstage()
		return "", err
	}
	if tip != wt.Branch {
		if _, err := g.git(ctx, wt.Path, "reset", "-q", "--soft", tip); err != nil {
			return "", err
		}
	}
	if _, err := g.git(ctx, wt.Main, "merge", "--no-ff", "-m", "Merge "+wt.Branch+": "+message, wt.Branch); err != nil {
		_, _ = g.git(ctx, wt.Main, "merge", "--abort")
		return "", err
	}
	stat, _ := g.git(ctx, wt.Main, "diff", noSubmodules, "--shortstat", "--no-ext-diff", "--no-textconv", "HEAD^1", "HEAD")
	return fmt.Sprintf("Merged %s into %s in %s: %s.", wt.Branch, target, wt.Main, strings.TrimSpace(stat)), nil
}

// checkMerge tries the merge of tip into the main worktree's HEAD without
// touching either, and refuses, naming the files, one that would conflict
// or that would overwrite files git does not track there (untracked ones,
// which git merge refuses only once it has begun, and ignored ones, which
// it overwrites).
func (g Git) checkMerge(ctx context.Context, wt Worktree, target, tip string) error {
	out, err := g.git(ctx, wt.Main, "merge-tree", "--write-tree", "--name-only", "--no-messages", "HEAD", tip)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil {
		if len(lines) > 1 {
			return refuse("merging %s into %s would conflict in %s: nothing was changed. Resolve it in the conversation (ask the agent to merge %s into its branch), then /merge again",
				wt.Branch, target, strings.Join(lines[1:], ", "), target)
		}
		return err
	}
	added, err := g.git(ctx, wt.Main, "diff", noSubmodules, "--name-only", "-z", "--no-renames", "--diff-filter=A", "HEAD", lines[0])
	if err != nil {
		return err
	}
	var inTheWay []string
	for _, name := range strings.Split(strings.TrimRight(added, "\x00"), "\x00") {
		if name == "" {
			continue
		}
		// Something there (or a file where the path needs a folder):
		// HEAD lacks the path and the worktree has nothing pending, so
		// it is a file git does not track.
		if _, err := os.Lstat(filepath.Join(wt.Main, name)); err == nil || errors.Is(err, syscall.ENOTDIR) {
			inTheWay = append(inTheWay, name)
		}
	}
	if len(inTheWay) > 0 {
		return refuse("merging %s into %s would overwrite %s in the main worktree %s, which git does not track: nothing was changed. Move or commit them, then /merge again",
			wt.Branch, target, strings.Join(inTheWay, ", "), wt.Main)
	}
	return nil
}

// pendingCommit stages everything pending in wt and, if there is
// anything, writes it as a commit on top of wt's HEAD without moving the
// branch. tip is that commit, or the branch when nothing is pending;
// unstage puts the index back as it was (what the agent had staged
// included), for a merge that does not go through.
func (g Git) pendingCommit(ctx context.Context, wt Worktree, message string) (tip string, unstage func(), err error) {
	index, err := g.git(ctx, wt.Path, "write-tree")
	if err != nil {
		return "", nil, err
	}
	unstage = func() { _, _ = g.git(ctx, wt.Path, "read-tree", strings.TrimSpace(index)) }
	if _, err := g.git(ctx, wt.Path, "add", "--all"); err != nil {
		unstage()
		return "", nil, err
	}
	if _, err := g.git(ctx, wt.Path, "diff", noSubmodules, "--cached", "--quiet"); err == nil {
		return wt.Branch, unstage, nil
	}
	tree, err := g.git(ctx, wt.Path, "write-tree")
	if err != nil {
		unstage()
		return "", nil, err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree), "-p", "HEAD", "-m", message}
	if email, _ := g.git(ctx, wt.Path, "config", "user.email"); strings.TrimSpace(email) == "" {
		// No author configured: the bot's name rather than a failure.
		args = append([]string{"-c", "user.name=jakebot", "-c", "user.email=jakebot@localhost"}, args...)
	}
	commit, err := g.git(ctx, wt.Path, args...)
	if err != nil {
		unstage()
		return "", nil, err
	}
	return strings.TrimSpace(commit), unstage, nil
}

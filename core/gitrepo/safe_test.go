package gitrepo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core/gitrepo"
)

// plant makes repo run a program of the agents' everywhere git lets its
// own files say so, each leaving a file named for it in the returned
// folder: every hook, the file-system monitor, a signing program, clean
// and smudge filters, a merge driver, a diff text converter and an
// external diff.
func plant(t *testing.T, repo string) (ran string) {
	t.Helper()
	ran = t.TempDir()
	program := func(name, after string) string {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\ntouch '"+filepath.Join(ran, name)+"'\n"+after+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	hooks := filepath.Join(repo, ".git", "hooks")
	for _, hook := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-merge-commit", "post-merge",
		"post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc", "post-rewrite"} {
		if err := os.Rename(program(hook, "exit 0"), filepath.Join(hooks, hook)); err != nil {
			t.Fatal(err)
		}
	}
	for key, value := range map[string]string{
		"core.fsmonitor":        program("fsmonitor", "exit 1"),
		"commit.gpgSign":        "true",
		"gpg.program":           program("gpg", "exit 1"),
		"filter.agent.clean":    program("clean", "cat"),
		"filter.agent.smudge":   program("smudge", "cat"),
		"merge.agent.driver":    program("merge-driver", "exit 0"),
		"diff.agent.textconv":   program("textconv", `cat "$1"`),
		"diff.external":         program("external-diff", "exit 0"),
		"gc.auto":               "1",
		"core.untrackedCache":   "false",
		"filter.agent.required": "true",
	} {
		run(t, repo, "config", key, value)
	}
	write(t, filepath.Join(repo, ".gitattributes"), "*.txt filter=agent merge=agent diff=agent\n")
	run(t, repo, "add", ".gitattributes")
	// Committed without the hooks: ran is cleared below anyway.
	run(t, repo, "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "commit", "-q", "-m", "attributes")
	clear(t, ran)
	return ran
}

func clear(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

func ranAny(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// plantedWorktree is a repository planted with the agents' programs and
// a worktree of it: where they left files, the worktree and its workdir.
func plantedWorktree(t *testing.T) (repo, ran string, wt gitrepo.Worktree, workdir string) {
	t.Helper()
	repo = newRepo(t)
	ran = plant(t, repo)
	wt, workdir, err := anywhere.Create(context.Background(), repo, "w", "")
	if err != nil {
		t.Fatal(err)
	}
	return repo, ran, wt, workdir
}

// A repository is the agents' to write, hooks and config included: what
// the bot has git do in it (a worktree, /diff, /merge with its commit,
// removing the worktree) runs none of their programs.
func TestGitRunsNothingTheRepositoryPlants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, ran, wt, workdir := plantedWorktree(t)
	write(t, filepath.Join(workdir, "a.txt"), "one\ntwo\nthree\nfour\n")
	write(t, filepath.Join(workdir, "new.txt"), "new\n")
	c, err := anywhere.Diff(ctx, workdir, &wt)
	if err != nil || !strings.Contains(c.Patch, "+four") || !strings.Contains(c.Patch, "+new") {
		t.Fatalf("Diff in the worktree = %+v, %v", c, err)
	}
	write(t, filepath.Join(repo, "b.txt"), "untracked\n")
	if c, err := anywhere.Diff(ctx, repo, nil); err != nil || !strings.Contains(c.Stat, "b.txt") {
		t.Fatalf("Diff in the main worktree = %+v, %v", c, err)
	}
	os.Remove(filepath.Join(repo, "b.txt"))
	msg, err := anywhere.Merge(ctx, wt, "four and new")
	if err != nil || !strings.HasPrefix(msg, "Merged jakebot/w into main") {
		t.Fatalf("Merge = %q, %v", msg, err)
	}
	if got := read(t, filepath.Join(repo, "a.txt")); got != "one\ntwo\nthree\nfour\n" {
		t.Errorf("merged a.txt = %q", got)
	}
	if err := anywhere.Remove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if names := ranAny(t, ran); len(names) != 0 {
		t.Errorf("git ran the repository's own programs: %v", names)
	}
}

// Both sides changed a.txt, whose attributes name the agents' merge
// driver: /merge refuses, as for any conflict, rather than run it.
func TestMergeRunsNoMergeDriver(t *testing.T) {
	t.Parallel()
	repo, ran, wt, workdir := plantedWorktree(t)
	write(t, filepath.Join(workdir, "a.txt"), "one\ntwo\nthree\nbranch\n")
	write(t, filepath.Join(repo, "a.txt"), "main\none\ntwo\nthree\n")
	run(t, repo, "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "-c", "core.fsmonitor=false", "-c", "filter.agent.clean=", "-c", "filter.agent.required=false", "commit", "-q", "-am", "main")
	clear(t, ran)
	_, err := anywhere.Merge(context.Background(), wt, "branch")
	if !strings.Contains(refusal(err), "would conflict in a.txt") {
		t.Errorf("Merge = %v, want a conflict", err)
	}
	if names := ranAny(t, ran); len(names) != 0 {
		t.Errorf("git ran the repository's own programs: %v", names)
	}
}

// A submodule is a repository of its own, whose config and attributes
// the bot's settings do not reach: /diff and /merge's checks of the main
// worktree do not look into it, so its filter does not run (issue 34).
func TestSubmodulesRunNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, sub := newRepo(t), newRepo(t)
	run(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
	run(t, repo, "commit", "-q", "-m", "sub")
	wt, _, err := anywhere.Create(ctx, repo, "w", "")
	if err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(t.TempDir(), "filter-ran")
	run(t, filepath.Join(repo, "sub"), "config", "filter.x.clean", "touch '"+ran+"'; cat")
	write(t, filepath.Join(repo, "sub", ".gitattributes"), "* filter=x\n")
	write(t, filepath.Join(repo, "sub", "a.txt"), "changed in the submodule\n")
	if _, err := anywhere.Diff(ctx, repo, nil); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(wt.Path, "b.txt"), "b\n")
	if _, err := anywhere.Merge(ctx, wt, "b"); err != nil && refusal(err) == "" {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the submodule's filter ran")
	}
}

// Git looks for a workdir's repository no higher than the ceiling: a
// repository above it is not the workdir's (issue 34).
func TestCeiling(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	dir := filepath.Join(repo, "src")
	if _, _, err := anywhere.Top(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	_, _, err := gitrepo.Git{Ceiling: []string{repo}}.Top(context.Background(), dir)
	if !errors.Is(err, gitrepo.ErrNotARepo) {
		t.Errorf("Top below the ceiling = %v, want ErrNotARepo", err)
	}
}

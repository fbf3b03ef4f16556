package core_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// gitRepo makes a repository in dir/repo with a.txt committed on main.
func gitRepo(t *testing.T, dir string) string {
	t.Helper()
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "add", ".")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
	return repo
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A new /start where a worktree conversation was ends that one as
// /conversation end would: its worktree is removed when nothing in it is
// unmerged, kept and named otherwise; started again inside the worktree,
// the new conversation keeps it.
func TestStartingOverAWorktreeConversation(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	repo := gitRepo(t, f.root)
	wt := func(name string) string { return filepath.Join(repo, ".jakebot", "worktrees", name) }
	f.say("alice", "/fake start "+repo+" --worktree one")
	f.expect("started in " + wt("one"))
	f.say("alice", "/fake start "+repo)
	f.expect("The fake conversation that was here has ended (/fake resume brings it back).\nIts worktree " + wt("one") + " and branch jakebot/one had nothing unmerged and are removed.")
	if _, err := os.Stat(wt("one")); !os.IsNotExist(err) {
		t.Errorf("the replaced conversation's worktree is still there (%v)", err)
	}

	f.say("alice", "/fake start "+repo+" --worktree two")
	f.expect("started in " + wt("two"))
	if err := os.WriteFile(filepath.Join(wt("two"), "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.say("alice", "/fake start")
	f.expect("fake conversation started in " + wt("two") + ". Just type to chat.\nThe fake conversation that was here has ended")
	f.say("alice", "/status")
	f.expect("Worktree: " + wt("two") + " on branch jakebot/two")
	f.say("alice", "/fake start "+repo)
	f.expect("is kept: it has 1 changed files not committed")
	if got, err := os.ReadFile(filepath.Join(wt("two"), "a.txt")); err != nil || string(got) != "two\n" {
		t.Errorf("the kept worktree's a.txt = %q, %v", got, err)
	}
}

// /merge commits what is pending under the conversation's title, as the
// CLI lists it, and names it in the merge; a file of the user's in the way
// is named and nothing is merged.
func TestMergeIsTitledAfterTheConversation(t *testing.T) {
	t.Parallel()
	write := func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		if err := os.WriteFile(filepath.Join(turn.Workdir, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
			return core.TurnResult{}, err
		}
		emit(core.TextEvent("wrote notes.txt"))
		return core.TurnResult{SessionID: "s-notes"}, nil
	}
	f := newRouterFixture(t, write)
	f.plugin.List = plugintest.History([]core.ConversationInfo{{SessionID: "s-notes", Title: "Write the release\n  notes"}})
	repo := gitRepo(t, f.root)
	f.say("alice", "/fake start "+repo+" --worktree notes")
	f.expect("its own worktree")
	f.turn("write the release notes")

	if err := os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.say("alice", "/merge")
	f.expect("would overwrite notes.txt in the main worktree " + repo + ", which git does not track: nothing was changed")
	if err := os.Remove(filepath.Join(repo, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	f.say("alice", "/merge")
	f.expect("Merged jakebot/notes into main")
	for rev, want := range map[string]string{"HEAD": "Merge jakebot/notes: Write the release notes\n", "HEAD^2": "Write the release notes\n"} {
		if got := git(t, repo, "log", "--format=%s", "-1", rev); got != want {
			t.Errorf("%s's message = %q, want %q", rev, got, want)
		}
	}
}

// A bare /resume after /conversation end goes back to the ended
// conversation's worktree when it was kept (unmerged work), worktree and
// all; when it was removed, to its repository.
func TestBareResumeAfterEndingAWorktreeConversation(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.plugin.List = func(_ context.Context, wd string) ([]core.ConversationInfo, error) {
		return []core.ConversationInfo{{SessionID: "s-" + filepath.Base(wd)}}, nil
	}
	f.router.Conversations().SetOwner("fake", "s-kept", "fake/alice")
	f.router.Conversations().SetOwner("fake", "s-repo", "fake/alice")
	repo := gitRepo(t, f.root)
	kept := filepath.Join(repo, ".jakebot", "worktrees", "kept")
	f.say("alice", "/fake start "+repo+" --worktree kept")
	f.expect("started in " + kept)
	if err := os.WriteFile(filepath.Join(kept, "a.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.say("alice", "/conversation end")
	f.expect("is kept")
	f.say("alice", "/resume")
	f.expect("Fake fake conversations in " + kept)
	f.say("alice", "/resume s-kept")
	f.expect("Resumed Fake fake conversation s-kept in " + kept)
	f.say("alice", "/status")
	f.expect("Worktree: " + kept + " on branch jakebot/kept")

	git(t, kept, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "kept")
	git(t, repo, "merge", "-q", "jakebot/kept")
	f.say("alice", "/conversation end")
	f.expect("had nothing unmerged and are removed")
	f.say("alice", "/resume")
	f.expect("Fake fake conversations in " + repo + " (newest first)")
	f.say("alice", "/resume s-repo")
	f.expect("Resumed Fake fake conversation s-repo in " + repo)
}

// A repository that holds .jakebot as a symlink gets no worktree where it
// points: the start is refused, and nothing is checked out there.
func TestWorktreeFollowsNoSymlink(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	repo := gitRepo(t, f.root)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(repo, ".jakebot")); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", ".jakebot")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a link")
	f.say("alice", "/fake start "+repo+" --worktree w1")
	f.expect(".jakebot is not a folder (a symlink?): no worktree is made there")
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("made where the symlink points: %v", entries)
	}
}

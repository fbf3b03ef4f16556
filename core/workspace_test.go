package core_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// Git finds repositories outside the allowed roots: one above the root (a
// home kept in git, a monorepo with one root per team), or one a .git
// file names. The bot uses neither: /diff shows nothing of it, --worktree
// writes no branch or worktree into it, and an upload does not write its
// info/exclude (issue 34).
func TestGitOutsideTheRootsIsNotUsed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		layout func(tmp, outer string) (root, proj string)
	}{
		{"a repository above the root", func(tmp, outer string) (string, string) {
			root := filepath.Join(outer, "root")
			return root, filepath.Join(root, "proj")
		}},
		{"a .git file naming one outside", func(tmp, outer string) (string, string) {
			root := filepath.Join(tmp, "root")
			proj := filepath.Join(root, "proj")
			mkdirAll(t, proj)
			writeTestFile(t, filepath.Join(proj, ".git"), "gitdir: "+filepath.Join(outer, ".git")+"\n")
			return root, proj
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			outer := gitRepo(t, tmp)
			writeTestFile(t, filepath.Join(outer, "a.txt"), "the outside repository's secret\n")
			root, proj := tc.layout(tmp, outer)
			mkdirAll(t, proj)
			f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
				roots, err := core.NewRoots([]string{root})
				if err != nil {
					t.Fatal(err)
				}
				// Worktrees inside the root: only the repository is outside.
				cfg.Roots, cfg.WorktreeDir = roots, filepath.Join(root, "worktrees")
			})
			f.say("alice", "/fake start "+proj)
			f.expect("conversation started in " + proj)
			f.say("alice", "/diff")
			if got := f.next(); strings.Contains(got, "secret") || !strings.Contains(got, "git repository") {
				t.Errorf("/diff = %q, want a refusal", got)
			}
			f.say("alice", "/fake start "+proj+" --worktree w")
			if got := f.next(); strings.Contains(got, "started") {
				t.Errorf("/fake start --worktree = %q, want a refusal", got)
			}
			if out := git(t, outer, "branch", "--list", "jakebot/*"); out != "" {
				t.Errorf("a branch was made in the outside repository: %q", out)
			}
			f.say("alice", "/fake start "+proj)
			f.expect("conversation started in " + proj)
			f.send("look", file("notes.txt", core.FileDocument, "notes", 5))
			<-f.plugin.Started()
			f.next()
			if data, _ := os.ReadFile(filepath.Join(outer, ".git", "info", "exclude")); strings.Contains(string(data), ".jakebot") {
				t.Errorf("the outside repository's info/exclude was written: %q", data)
			}
		})
	}
}

func mkdirAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// /merge and ending a conversation merge or remove only a worktree of the
// bot's, inside the author's roots, as on a runner: a conversation's
// state naming the user's own worktree, the main worktree or a
// repository outside changes nothing.
func TestOnlyTheBotsWorktreesAreMergedOrRemoved(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	repo := gitRepo(t, f.root)
	outside := gitRepo(t, t.TempDir())
	feat := filepath.Join(repo, ".jakebot", "worktrees", "feat")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", feat)
	writeTestFile(t, filepath.Join(feat, "wip.txt"), "mine\n")
	k := core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"}
	for _, tc := range []struct {
		name, path, branch, main, want string
	}{
		{"the main worktree itself", repo, "jakebot/repo", repo, "not a worktree of"},
		{"a branch not the bot's", filepath.Join(repo, "x"), "main", repo, "not a worktree of the bot's"},
		{"a repository outside", filepath.Join(outside, "wt"), "jakebot/wt", outside, "outside the allowed roots"},
		{"a worktree on another branch", feat, "jakebot/feat", repo, "is not on branch jakebot/feat"},
	} {
		f.router.Conversations().Put(k, core.Conversation{Plugin: "fake", Workdir: repo, Worktree: tc.path, Branch: tc.branch, Repo: tc.main})
		f.say("alice", "/merge")
		if got := f.next(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: /merge = %q, want %q", tc.name, got, tc.want)
		}
		f.say("alice", "/conversation end")
		if got := f.next(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: /conversation end = %q, want %q", tc.name, got, tc.want)
		}
	}
	if out := git(t, feat, "status", "--porcelain"); out != "?? wip.txt\n" {
		t.Errorf("the user's worktree was changed: %q", out)
	}
	if out := git(t, repo, "log", "--oneline"); strings.Count(out, "\n") != 1 {
		t.Errorf("commits were merged into the repository: %q", out)
	}
}

// A conversation a gateway saved on a runner, loaded by a bot that
// reaches no runner (NATS_URL unset), runs nothing here: its paths are
// the runner's (issue 28).
func TestARunnersConversationWithoutRunners(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	k := core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"}
	// The runner's path exists here too: it must not be taken for this
	// machine's.
	f.router.Conversations().Put(k, core.Conversation{Plugin: "fake", Runner: "box2", Workdir: f.root})
	for _, say := range []string{"hello", "/diff", "/file a.txt", "/status"} {
		f.say("alice", say)
		want := "on runner box2, and this bot reaches no runner"
		if say == "/status" {
			want = "in box2:" + f.root
		}
		if got := f.next(); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", say, got, want)
		}
	}
	select {
	case turn := <-f.plugin.Started():
		t.Errorf("a turn ran here in %s", turn.Workdir)
	default:
	}
}

package remote_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// A conversation on a runner gets a worktree of its own there: its turns
// run in it, /diff shows what changed since its branch point, /merge
// merges it into the main worktree there, /conversation end removes it,
// and a bare /resume after that lists the repository. Outside git,
// --worktree is refused.
func TestWorktreeOnARunner(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	app := box2.app()
	writeFile(t, filepath.Join(app, "main.go"), []byte("package main\n"))
	gitInit(t, app)
	wt := filepath.Join(app, ".jakebot", "worktrees", "fix")

	w.say("/claude start box2:" + app + " --worktree fix")
	w.expect("conversation started in box2:"+wt, "own worktree box2:"+wt+" on branch jakebot/fix")
	w.say("hello")
	w.expect("box2 echo: hello")
	if turn := recv(t, box2.plugin.Started(), "a turn on box2"); turn.Workdir != wt {
		t.Errorf("the turn ran in %s, want the worktree %s", turn.Workdir, wt)
	}
	w.say("/status")
	w.expect("Worktree: box2:" + wt + " on branch jakebot/fix")

	writeFile(t, filepath.Join(wt, "notes.txt"), []byte("from the worktree\n"))
	w.say("/diff")
	w.expect("Changes since jakebot/fix's branch point", "notes.txt", "+from the worktree")
	w.say("/merge")
	w.expect("Merged jakebot/fix into main")
	if data, err := os.ReadFile(filepath.Join(app, "notes.txt")); err != nil || string(data) != "from the worktree\n" {
		t.Errorf("the main worktree's notes.txt: %q, %v", data, err)
	}

	w.say("/conversation end")
	w.expect("Its worktree box2:" + wt + " and branch jakebot/fix had nothing unmerged and are removed.")
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	w.say("/resume")
	w.expect("conversations in box2:" + app)
	// Started again with no path, it stays on its runner.
	w.say("/claude start box2:" + app)
	w.expect("conversation started in box2:" + app)
	w.say("/claude start")
	w.expect("conversation started in box2:" + app)

	plain := mkdir(t, box2.roots[0], "plain")
	w.say("/claude start box2:" + plain + " --worktree")
	w.expect("is not in a git repository: --worktree needs one")
}

// A runner merges or removes only a worktree of the bot's, made as
// CreateWorktree makes them, inside the user's roots there: a forged
// request naming another branch, another repository or a path outside
// changes nothing.
func TestRunnerRefusesForgedWorktrees(t *testing.T) {
	t.Parallel()
	def, other := twoRoots(t)
	outside := tempDir(t)
	w := newWorld(t)
	w.startRunner(runnerOpts{name: "box2", roots: []string{def, other}})
	w.startGateway()
	w.waitOnline("box2")
	app := filepath.Join(def, "app")
	writeFile(t, filepath.Join(app, "main.go"), []byte("package main\n"))
	gitInit(t, app)
	// A worktree of the user's own, named like one of the bot's, with
	// work not committed.
	feat := filepath.Join(app, ".jakebot", "worktrees", "feat")
	if out, err := exec.Command("git", "-C", app, "worktree", "add", "-q", "-b", "feature", feat).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(feat, "wip.txt"), []byte("mine\n"))
	forger := connect(t, w.url)
	op := func(op, path, branch, main string, admin bool) string {
		req, _ := json.Marshal(map[string]any{"op": op, "admin": admin, "title": "x",
			"worktree": map[string]string{"path": path, "branch": branch, "main": main}})
		return string(req)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"the main worktree itself", op("merge", app, "jakebot/app", app, true), "not a worktree of"},
		{"a branch not the bot's", op("merge", filepath.Join(app, "x"), "main", app, true), "not a worktree of the bot's"},
		{"a repository outside", op("remove", filepath.Join(outside, "wt"), "jakebot/wt", outside, true), "outside the allowed roots"},
		{"another root, not an admin", op("merge", filepath.Join(other, "wt"), "jakebot/wt", other, false), "only admins"},
		{"a worktree on another branch", op("merge", feat, "jakebot/feat", app, true), "is not on branch jakebot/feat"},
		{"an unknown operation", op("rm", filepath.Join(app, "gone"), "jakebot/gone", app, true), "no worktree operation"},
	} {
		reply := request(t, forger, "jakebot.v4.runner.box2.worktree", tc.data)
		if msg, _ := reply["error"].(map[string]any)["message"].(string); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, reply, tc.want)
		}
	}
	if out, err := exec.Command("git", "-C", feat, "status", "--porcelain").CombinedOutput(); err != nil || string(out) != "?? wip.txt\n" {
		t.Errorf("the user's worktree was changed: %q, %v", out, err)
	}
}

// A runner, as the gateway's own machine, uses no repository that reaches
// outside the user's roots there: not one above the root, not one a .git
// file names. /diff shows nothing of it, --worktree writes no branch into
// it, an upload does not write its info/exclude (issue 34).
func TestRunnerUsesNoGitOutsideTheRoots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		layout func(tmp, outer string) (root, proj string)
	}{
		{"a repository above the root", func(tmp, outer string) (string, string) {
			root := mkdir(t, outer, "root")
			return root, mkdir(t, root, "proj")
		}},
		{"a .git file naming one outside", func(tmp, outer string) (string, string) {
			root := mkdir(t, tmp, "root")
			proj := mkdir(t, root, "proj")
			writeFile(t, filepath.Join(proj, ".git"), []byte("gitdir: "+filepath.Join(outer, ".git")+"\n"))
			return root, proj
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp := tempDir(t)
			outer := mkdir(t, tmp, "outer")
			writeFile(t, filepath.Join(outer, "a.txt"), []byte("one\n"))
			gitInit(t, outer)
			writeFile(t, filepath.Join(outer, "a.txt"), []byte("the outside repository's secret\n"))
			root, proj := tc.layout(tmp, outer)
			w := newWorld(t)
			box2 := w.startRunner(runnerOpts{name: "box2", roots: []string{root}, worktreeDir: filepath.Join(root, "worktrees")})
			w.startGateway()
			w.waitOnline("box2")
			w.say("/claude start box2:" + proj)
			w.expect("conversation started in box2:" + proj)
			w.say("/diff")
			if got := recv(t, w.gw.rec.Written(), "the /diff reply").Text; strings.Contains(got, "secret") || !strings.Contains(got, "git repository") {
				t.Errorf("/diff = %q, want a refusal", got)
			}
			w.say("/claude start box2:" + proj + " --worktree w")
			if got := recv(t, w.gw.rec.Written(), "the /start reply").Text; strings.Contains(got, "started") {
				t.Errorf("/claude start --worktree = %q, want a refusal", got)
			}
			if out, _ := exec.Command("git", "-C", outer, "branch", "--list", "jakebot/*").CombinedOutput(); len(out) != 0 {
				t.Errorf("a branch was made in the outside repository: %q", out)
			}
			w.say("/claude start box2:" + proj)
			w.expect("conversation started in box2:" + proj)
			w.gw.rec.Say(core.Message{Key: key(admin), Text: "look", Files: []core.Attachment{attachment("notes.txt", core.FileDocument, []byte("notes"))}})
			recv(t, box2.plugin.Started(), "a turn on box2")
			if data, _ := os.ReadFile(filepath.Join(outer, ".git", "info", "exclude")); strings.Contains(string(data), ".jakebot") {
				t.Errorf("the outside repository's info/exclude was written: %q", data)
			}
		})
	}
}

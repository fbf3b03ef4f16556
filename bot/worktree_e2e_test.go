package bot_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// worktreeBot is a router with the real Claude Code against the fake
// model, serving several users, each in a conversation of their own.
type worktreeBot struct {
	t      *testing.T
	rec    *platformtest.Recorder
	handle core.Handler
	model  *plugintest.Anthropic
}

func newWorktreeBot(t *testing.T, root string, replies ...plugintest.Reply) *worktreeBot {
	t.Helper()
	return newWorktreeBotWith(t, root, nil, replies...)
}

func newWorktreeBotWith(t *testing.T, root string, configure func(*core.RouterConfig), replies ...plugintest.Reply) *worktreeBot {
	t.Helper()
	model := plugintest.NewAnthropic(t, replies...)
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	var router *core.Router
	checkNoneLeft(t, alive, &router)
	plugin := claude.New(claude.Config{PermissionMode: "acceptEdits", ConfigDir: filepath.Join(home, ".claude"),
		Settings: cliproc.Settings{Bin: plugintest.CLIPath(t, "claude"), Args: []string{"--allowedTools", "Bash"},
			Env: append(plugintest.ClaudeEnv(t, model, home), mark)}}, nil)
	reg, err := core.NewRegistry(plugin)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := core.NewRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	access.Allow("fake", "alice", "bob")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	clock := coretest.NewInstantClock()
	cfg := core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock, TurnTimeout: 2 * time.Minute}
	if configure != nil {
		configure(&cfg)
	}
	router = core.NewRouter(ctx, cfg, nil)
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	rec.MaxLen = 1 << 20
	return &worktreeBot{t: t, rec: rec, handle: router.Attach(rec), model: model}
}

// say sends text as user's message and returns the bot's reply, failing
// unless it matches every pattern.
func (b *worktreeBot) say(user, text string, patterns ...string) string {
	b.t.Helper()
	b.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: user, Channel: "c"}, Text: text})
	got := (<-b.rec.Written()).Text
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(got) {
			b.t.Fatalf("%s: %q: reply %q does not match %q", user, text, got, p)
		}
	}
	return got
}

// gitRepo makes a repository in root/repo with a.txt committed on main.
func gitRepo(t *testing.T) (root, repo string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo = filepath.Join(root, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	commitA(t, repo, "one\ntwo\nthree\n")
	return root, repo
}

// commitA makes dir a git repository on main with a.txt, holding text,
// committed.
func commitA(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Two conversations in one repository, each in its own worktree, edit the
// same file with the real CLI without touching each other; /diff shows
// each one's change; the first /merge goes through, the second conflicts
// and changes nothing; ending them removes the merged worktree and keeps
// the other.
func TestWorktreeConversationsEditTheSameFileApart(t *testing.T) {
	t.Parallel()
	root, repo := gitRepo(t)
	edit := func(who string) plugintest.Reply {
		return plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_" + who, Name: "Bash",
			Input: map[string]any{"command": "printf 'one\\n" + who + "\\nthree\\n' > a.txt", "description": "edit a.txt"}}}
	}
	b := newWorktreeBot(t, root,
		edit("alice"), plugintest.Reply{Text: []string{"Alice's edit is made."}},
		edit("bob"), plugintest.Reply{Text: []string{"Bob's edit is made."}},
	)
	wtA := filepath.Join(repo, ".jakebot", "worktrees", "alice-fix")
	wtB := filepath.Join(repo, ".jakebot", "worktrees", "bob-fix")
	b.say("alice", "/claude start "+repo+" --worktree alice-fix", `started in `+regexp.QuoteMeta(wtA), `branch jakebot/alice-fix`)
	b.say("bob", "/claude start "+repo+" --worktree=bob-fix", `started in `+regexp.QuoteMeta(wtB))
	b.say("alice", "change the second line", `Alice's edit is made\.`)
	b.say("bob", "change the second line", `Bob's edit is made\.`)

	if got := readFile(t, filepath.Join(repo, "a.txt")); got != "one\ntwo\nthree\n" {
		t.Errorf("the repository's own a.txt = %q, want it untouched", got)
	}
	for who, wt := range map[string]string{"alice": wtA, "bob": wtB} {
		if got := readFile(t, filepath.Join(wt, "a.txt")); got != "one\n"+who+"\nthree\n" {
			t.Errorf("%s's worktree a.txt = %q", who, got)
		}
	}
	b.say("alice", "/diff", `Changes since jakebot/alice-fix's branch point`, `a\.txt \| 2 \+-`, "(?s)```diff.*-two\n\\+alice")
	b.say("bob", "/status", `Worktree: `+regexp.QuoteMeta(wtB)+` on branch jakebot/bob-fix`)

	b.say("alice", "/merge", `Merged jakebot/alice-fix into main`)
	if got := readFile(t, filepath.Join(repo, "a.txt")); got != "one\nalice\nthree\n" {
		t.Errorf("a.txt after alice's merge = %q", got)
	}
	b.say("bob", "/merge", `would conflict in a\.txt: nothing was changed`)
	if got := readFile(t, filepath.Join(repo, "a.txt")); got != "one\nalice\nthree\n" {
		t.Errorf("a.txt after bob's refused merge = %q", got)
	}
	b.say("alice", "/conversation end", `Its worktree .* are removed`)
	b.say("bob", "/conversation end", `is kept: it has 1 changed files not committed`)
	if _, err := os.Stat(wtA); !os.IsNotExist(err) {
		t.Errorf("alice's merged worktree is still there (%v)", err)
	}
	if got := readFile(t, filepath.Join(wtB, "a.txt")); got != "one\nbob\nthree\n" {
		t.Errorf("bob's kept worktree lost its edit: %q", got)
	}
	if log, _ := exec.Command("git", "-C", repo, "log", "--format=%s", "-2").Output(); !strings.Contains(string(log), "Merge jakebot/alice-fix") {
		t.Errorf("log = %q, want alice's merge", log)
	}
}

// A plain workdir: a second conversation there is warned, --worktree
// outside git is refused, /diff is git diff and /merge has nothing to do.
func TestPlainWorkdirConversations(t *testing.T) {
	t.Parallel()
	root, repo := gitRepo(t)
	b := newWorktreeBot(t, root)
	b.say("alice", "/claude start "+repo, `started in `+regexp.QuoteMeta(repo)+`\. Just type to chat\.$`)
	b.say("bob", "/claude start "+repo, `Another conversation \(fake/alice/c, claude\) works in this directory too`, `--worktree`)
	b.say("bob", "/claude start "+root+" --worktree", `is not in a git repository: --worktree needs one`)
	b.say("alice", "/diff", `No changes since HEAD\.`)
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.say("alice", "/diff", `Changes since HEAD`, "(?s)```diff.*\\+changed")
	b.say("alice", "/merge", `not in a worktree: there is no branch to merge`)
	b.say("alice", "/claude start "+repo+" --worktree ../escape", `is not a worktree name`)
}

// WORKTREES=always gives every conversation in a git repository a
// worktree, named after its plugin; --no-worktree opts out; a workdir
// outside git stays plain, with a note; WORKTREE_DIR is obeyed, and
// refused outside the roots.
func TestWorktreesAlways(t *testing.T) {
	t.Parallel()
	root, repo := gitRepo(t)
	trees := filepath.Join(root, "trees")
	b := newWorktreeBotWith(t, root, func(cfg *core.RouterConfig) { cfg.Worktrees, cfg.WorktreeDir = true, trees })
	b.say("alice", "/claude start "+repo, `started in `+regexp.QuoteMeta(filepath.Join(trees, "repo"))+`/claude-[0-9a-f]{6}\.`, `branch jakebot/claude-`)
	b.say("alice", "/claude start "+repo+" --no-worktree", `started in `+regexp.QuoteMeta(repo)+`\. Just type`)
	b.say("alice", "/claude start "+root, `not in a git repository, so the conversation works there directly`)

	outside, _ := gitRepo(t)
	b2 := newWorktreeBotWith(t, root, func(cfg *core.RouterConfig) { cfg.WorktreeDir = outside })
	b2.say("alice", "/claude start "+repo+" --worktree x", `outside the directories you may work in`)
	if out, _ := exec.Command("git", "-C", repo, "branch", "--list", "jakebot/x").Output(); len(out) != 0 {
		t.Errorf("a refused worktree left branch %q", out)
	}
}

package bot_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// replies collects what the console writes: in pipe mode each write is
// one final reply.
type replies chan string

func (r replies) Write(p []byte) (int, error) {
	r <- string(p)
	return len(p), nil
}

// console is a bot running on the console platform, fed through a pipe.
type console struct {
	t    testing.TB
	in   *io.PipeWriter
	out  replies
	done chan error
}

// fixture is what one end-to-end test shares between bot runs: the fake
// model, a private home and a workdir.
type fixture struct {
	t       testing.TB
	model   *plugintest.Anthropic
	home    string
	workdir string
	env     []string
	mark    string // the environment entry that marks the test's processes
	alive   func() []plugintest.Process
}

func newFixture(t testing.TB, replies ...plugintest.Reply) *fixture {
	t.Helper()
	plugintest.CLIPath(t, "claude") // skip or fail early when it is missing
	f := &fixture{t: t, model: plugintest.NewAnthropic(t, replies...), home: plugintest.Home(t)}
	wd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.workdir = wd
	f.mark, f.alive = plugintest.ProcessMarker(t)
	f.env = append(plugintest.ClaudeEnv(t, f.model, f.home), f.mark)
	t.Cleanup(func() {
		if pids := f.alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	return f
}

// checkNoneLeft registers the check that none of the test's processes
// (alive) outlived it. Registered before the bot starts, it runs after
// the bot's clean-up, once *router, when set, has shut down and its turns
// ended, and it runs even when the bot failed to start.
func checkNoneLeft(t testing.TB, alive func() []plugintest.Process, router **core.Router) {
	t.Cleanup(func() {
		if r := *router; r != nil {
			r.Shutdown()
			r.Wait()
		}
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
}

func (f *fixture) config(extraArgs ...string) bot.Config {
	return bot.Config{
		AllowedRoots: []string{f.workdir},
		TurnTimeout:  2 * time.Minute,
		QueueLimit:   5,
		LogLevel:     "debug",
		Claude: claude.Config{
			Settings:       cliproc.Settings{Bin: plugintest.CLIPath(f.t, "claude"), Args: extraArgs, Env: f.env},
			PermissionMode: "acceptEdits",
			ConfigDir:      filepath.Join(f.home, ".claude"),
		},
	}
}

// start runs the bot in this process, its input a script whose lines wait
// for the one before.
func (f *fixture) start(cfg bot.Config) *console {
	return f.startConsole(context.Background(), cfg, false)
}

// startTyped runs the bot with input as a person types it: lines reach the
// bot at once, so /stop can interrupt a turn.
func (f *fixture) startTyped(cfg bot.Config) *console {
	return f.startConsole(context.Background(), cfg, true)
}

// startConsole runs the bot until its input ends or ctx is cancelled (as
// SIGTERM does).
func (f *fixture) startConsole(ctx context.Context, cfg bot.Config, typed bool) *console {
	f.t.Helper()
	pr, pw := io.Pipe()
	c := &console{t: f.t, in: pw, out: make(replies, 100), done: make(chan error, 1)}
	go func() {
		c.done <- bot.Run(ctx, cfg, bot.Stdio{In: pr, Out: c.out, Err: f.t.Output(), Typed: typed})
	}()
	f.t.Cleanup(func() { pw.Close() })
	return c
}

func (c *console) say(lines ...string) {
	c.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(c.in, l+"\n"); err != nil {
			c.t.Fatal(err)
		}
	}
}

// expect returns the next reply, failing unless it matches every pattern.
// A reply that never comes fails the test after replyBound, naming what it
// waited for, rather than hanging until go test's -timeout.
func (c *console) expect(patterns ...string) string {
	c.t.Helper()
	select {
	case <-time.After(replyBound):
		c.t.Fatalf("no reply matching %q in %s", patterns, replyBound)
	case got := <-c.out:
		return c.match(got, patterns)
	case err := <-c.done:
		c.done <- err // for whoever waits for the exit next
		// The bot writes its replies before it exits, and a select
		// chooses at random among what is ready: a reply may still wait.
		select {
		case got := <-c.out:
			return c.match(got, patterns)
		default:
		}
		c.t.Fatalf("bot exited (%v) while a reply was expected", err)
	}
	return ""
}

func (c *console) match(got string, patterns []string) string {
	c.t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(got) {
			c.t.Fatalf("reply %q does not match %q", got, p)
		}
	}
	return got
}

// close ends the input and waits for the bot to exit.
func (c *console) close() {
	c.t.Helper()
	c.in.Close()
	if err := <-c.done; err != nil {
		c.t.Fatalf("bot exited with %v", err)
	}
}

// replyBound bounds the wait for one console reply: far longer than any
// turn of a real CLI against the fake model takes here (under 40 s with
// four at once), short of CI's test timeout.
const replyBound = 3 * time.Minute

var sessionRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func TestConsoleStartAndStreamedReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Hello ", "from the ", "fake model."}})
	c := f.start(f.config())
	c.say("/claude start .", "hello there")
	c.expect(`Claude Code conversation started in ` + regexp.QuoteMeta(f.workdir))
	c.expect(`(?s)^Hello from the fake model\.\n\n— \d+\.\ds`)
	c.close()
	reqs := f.model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].LastUserText(), "hello there") {
		t.Fatalf("model saw %d requests, want one with the prompt", len(reqs))
	}
}

func TestConsoleSecondTurnResumesTheFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Text: []string{"The secret word is pineapple."}},
		plugintest.Reply{Text: []string{"You asked about the secret."}},
	)
	c := f.start(f.config())
	c.say("/claude start", "remember a secret word")
	c.expect(`started`)
	c.expect(`pineapple`)
	c.say("what was it?")
	c.expect(`You asked about the secret`)
	c.say("/status")
	status := c.expect(`Session: ` + sessionRE.String())
	c.close()
	reqs := f.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model saw %d requests, want 2", len(reqs))
	}
	if text := reqs[1].Text(); !strings.Contains(text, "remember a secret word") || !strings.Contains(text, "pineapple") {
		t.Fatalf("second request does not carry the first exchange: %q", text)
	}
	if !strings.Contains(status, sessionRE.FindString(status)) {
		t.Fatal("no session id in /status")
	}
}

func TestConsoleToolCallChangesTheWorkdir(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Text: []string{"Creating it."}, Tool: &plugintest.ToolCall{ID: "toolu_1", Name: "Bash",
			Input: map[string]any{"command": "echo made-by-claude > made.txt", "description": "create made.txt"}}},
		plugintest.Reply{Text: []string{"Created made.txt."}},
	)
	c := f.start(f.config("--allowedTools", "Bash"))
	c.say("/claude start", "create made.txt")
	c.expect(`started`)
	c.expect(`✅ Bash: echo made-by-claude > made.txt`, `Created made\.txt\.`)
	c.close()
	data, err := os.ReadFile(filepath.Join(f.workdir, "made.txt"))
	if err != nil || strings.TrimSpace(string(data)) != "made-by-claude" {
		t.Fatalf("made.txt = %q, %v; want the tool's output", data, err)
	}
}

func TestConsoleModelErrorIsShown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Status: 401, Message: "invalid x-api-key"})
	c := f.start(f.config())
	c.say("/claude start", "hello")
	c.expect(`started`)
	c.expect(`❌ \*\*Error:\*\* .*(API key|api-key)`)
	c.say("/status")
	c.expect(`Claude Code in `) // the bot is still serving
	c.close()
}

func TestConsoleListsAndResumesInANewProcess(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		plugintest.Reply{Text: []string{"First answer."}},
		plugintest.Reply{Text: []string{"Second answer."}},
	)
	c := f.start(f.config())
	c.say("/claude start", "plan the migration")
	c.expect(`started`)
	c.expect(`First answer`)
	c.say("/status")
	id := sessionRE.FindString(c.expect(`Session: `))
	c.say("/claude conversations")
	c.expect(`Claude Code conversations in `+regexp.QuoteMeta(f.workdir), `1\. `+id[:8]+`  .*plan the migration`)
	c.close()

	// A new bot process knows nothing of the conversation but the CLI's
	// history: resume it by a prefix of its id.
	out := f.pipeToBinary("/claude resume " + id[:8] + "\ncontinue please\n")
	for _, want := range []string{"Resumed Claude Code conversation " + id, "Second answer."} {
		if !strings.Contains(out, want) {
			t.Fatalf("output %q lacks %q", out, want)
		}
	}
	reqs := f.model.Requests()
	if last := reqs[len(reqs)-1].Text(); !strings.Contains(last, "plan the migration") || !strings.Contains(last, "First answer") {
		t.Fatalf("resumed request lacks the first exchange: %q", last)
	}
}

func TestConsoleStopKillsTheCLI(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	defer close(hold)
	f := newFixture(t, plugintest.Reply{Text: []string{"never"}, Hold: hold})
	c := f.startTyped(f.config())
	c.say("/claude start", "take your time")
	c.expect(`started`)
	<-f.model.Arrived() // the CLI is waiting on the model
	if len(f.alive()) == 0 {
		t.Fatal("no CLI process running during the turn")
	}
	c.say("/stop")
	c.expect(`Stopping the running turn`)
	c.expect(`Stopped\. The conversation continues`)
	if pids := f.alive(); len(pids) != 0 {
		t.Fatalf("processes %v still running after /stop", pids)
	}
	c.close()
}

func TestConsoleMissingCLI(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := f.config()
	cfg.Claude.Bin = "jakebot-no-such-claude"
	c := f.start(cfg)
	c.say("/claude start", "hello")
	c.expect(`started`)
	c.expect(`Claude Code CLI not found \(jakebot-no-such-claude\)\. Install it with .npm install -g @anthropic-ai/claude-code.`)
	c.close()
}

// pipeToBinary runs the jakebot binary in the workdir with script on its
// standard input, as `printf ... | jakebot` does, and returns its output.
// It keeps no state: it knows nothing but the CLI's history.
func (f *fixture) pipeToBinary(script string, env ...string) string {
	f.t.Helper()
	cmd := exec.Command(buildJakebot(f.t))
	cmd.Dir = f.workdir
	cmd.Env = append(append(f.env,
		"CLAUDE_BIN="+plugintest.CLIPath(f.t, "claude"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(f.home, ".claude"),
		"ALLOWED_ROOTS="+f.workdir,
		"STATE_FILE=off"), env...)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.Output()
	if err != nil {
		f.t.Fatalf("jakebot: %v\n%s", err, out)
	}
	return string(out)
}

// A script on a pipe runs in order: the listing after a turn sees it.
func TestConsoleScriptRunsInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"It is a bot."}})
	out := f.pipeToBinary("/claude start .\nsummarise README.md\n/claude conversations\n")
	start := strings.Index(out, "conversation started")
	answer := strings.Index(out, "It is a bot.")
	listing := regexp.MustCompile(`Claude Code conversations in .*\n1\. [0-9a-f]{8} .*summarise README\.md`).FindStringIndex(out)
	if start < 0 || answer < start || listing == nil || listing[0] < answer {
		t.Fatalf("output is not start, answer, listing of that turn, in order:\n%s", out)
	}
}

// A script on a pipe answers the agent's questions: each answer is the
// line after the question, and the next line waits for the turn it let
// go on.
func TestConsoleScriptAnswersAQuestion(t *testing.T) {
	t.Parallel()
	bash := func(id, command string) *plugintest.ToolCall {
		return &plugintest.ToolCall{ID: id, Name: "Bash", Input: map[string]any{"command": command, "description": "Run"}}
	}
	f := newFixture(t,
		plugintest.Reply{Tool: bash("toolu_1", "echo asked > asked.txt")},
		plugintest.Reply{Text: []string{"Made it."}},
		plugintest.Reply{Tool: bash("toolu_2", "rm asked.txt")},
		plugintest.Reply{Text: []string{"Kept it."}})
	out := f.pipeToBinary("/claude start\nmake it\ny\nremove it\nnot today\n/status\n", "CLAUDE_PERMISSION_MODE=default")
	want := []string{"Allow Bash?\n`echo asked > asked.txt`", "[y]es / [a]lways / [n]o", "Allowed Bash (", "Made it.",
		"Allow Bash?\n`rm asked.txt`", "Denied Bash (", "): not today", "Kept it.", "Always allowed: none"}
	at := 0
	for _, w := range want {
		i := strings.Index(out[at:], w)
		if i < 0 {
			t.Fatalf("output lacks %q after position %d:\n%s", w, at, out)
		}
		at += i + len(w)
	}
	if _, err := os.Stat(filepath.Join(f.workdir, "asked.txt")); err != nil {
		t.Errorf("the allowed command did not run, or the denied one did: %v", err)
	}
	if strings.Contains(out, "Not run, for want of permission: Bash `rm asked.txt`") == false {
		t.Errorf("the denial is not listed with the turn's result:\n%s", out)
	}
}

// buildJakebot builds the binary once per test run.
func buildJakebot(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "jakebot-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "jakebot")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/jake-bot/jake-bot/cmd/jakebot").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build jakebot: %v", buildErr)
	}
	return binPath
}

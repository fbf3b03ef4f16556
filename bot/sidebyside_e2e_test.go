package bot_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote/remotetest"
)

// Agents side by side (issue 44) with the real CLIs: Claude Code and
// Codex in one conversation, each against its fake model.

// claudeWrites is a Claude reply that writes text to a.txt with Bash.
func claudeWrites(text string) plugintest.Reply {
	return plugintest.Reply{Text: []string{"Writing."}, Tool: &plugintest.ToolCall{ID: "toolu_" + text, Name: "Bash",
		Input: map[string]any{"command": "echo " + text + " > a.txt", "description": "write a.txt"}}}
}

// codexPatch is a Codex reply whose apply_patch adds a file.
func codexPatch(name string) plugintest.Reply {
	return plugintest.Reply{Text: []string{"Patching."}, Tool: &plugintest.ToolCall{Name: "apply_patch",
		Input: map[string]any{"input": "*** Begin Patch\n*** Add File: " + name + "\n+added\n*** End Patch\n"}}}
}

func text(s string) plugintest.Reply { return plugintest.Reply{Text: []string{s}} }

// /ask codex in a Claude conversation: the turn reaches the OpenAI fake,
// its reply is labelled, the next /ask continues Codex's session, and the
// conversation stays Claude's.
func TestAskCodexInAClaudeConversation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, text("Claude here."))
	cfg := f.config()
	codex := otherCLIs[0].setup(t, f, &cfg, text("Codex thinks 4."), text("Still 4."))
	c := f.start(cfg)
	c.say("/claude start", "hello")
	c.expect(`started`)
	c.expect(`Claude here\.`)
	c.say("/ask codex what is 2+2?")
	c.expect(`🤝 Codex \(asked\):`, `Codex thinks 4\.`)
	c.say("/ask codex and again?")
	c.expect(`🤝 Codex \(asked\):`, `Still 4\.`)
	c.say("/status")
	c.expect(`Claude Code in `+regexp.QuoteMeta(f.workdir), `Helpers: Codex \(session [0-9a-f]{8}\)`)
	c.close()
	reqs := codex.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].Text(), "what is 2+2?") || !strings.Contains(reqs[1].Text(), "Codex thinks 4.") {
		t.Fatalf("Codex's requests = %d, the second without the first exchange", len(reqs))
	}
	if n := len(f.model.Requests()); n != 1 {
		t.Errorf("Claude's model got %d requests, want the one turn", n)
	}
}

// /review codex after a Claude turn that wrote a.txt: Codex gets the
// diff, the request and Claude's reply, runs read-only (its patch is
// refused), and its findings, sent back with /review fix, become Claude's
// next turn.
func TestReviewCodexAfterClaudeWroteAFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, claudeWrites("two"), text("Wrote two."), text("Fixed it."))
	commitA(t, f.workdir, "one\n")
	cfg := f.config("--allowedTools", "Bash")
	codex := otherCLIs[0].setup(t, f, &cfg, codexPatch("review.txt"), text("a.txt should say three.\nVERDICT: CHANGES"))
	c := f.start(cfg)
	c.say("/claude start", "write two in a.txt")
	c.expect(`started`)
	c.expect(`Wrote two\.`)
	c.say("/review codex")
	c.expect(`🔎 Codex \(reviewing Claude Code's work\):`, `a\.txt should say three\.`)
	offer := c.expect(`🔎 Codex asks for changes\.`, `/review fix [0-9a-f]{8}`)
	id := regexp.MustCompile(`/review fix ([0-9a-f]{8})`).FindStringSubmatch(offer)[1]
	c.say("/review fix " + id)
	c.expect(`🔧 Claude Code \(fixing Codex's findings\):`, `Fixed it\.`)
	c.close()
	review := codex.Requests()[0].Text()
	for _, want := range []string{"write two in a.txt", "Wrote two.", "-one\n+two", "VERDICT: APPROVE"} {
		if !strings.Contains(review, want) {
			t.Errorf("the review's request lacks %q:\n%s", want, review)
		}
	}
	if _, err := os.Stat(filepath.Join(f.workdir, "review.txt")); !os.IsNotExist(err) {
		t.Errorf("the read-only review wrote review.txt (%v)", err)
	}
	if reqs := f.model.Requests(); !strings.Contains(reqs[len(reqs)-1].LastUserText(), "a.txt should say three.") {
		t.Errorf("Claude's fix turn lacks the findings: %q", reqs[len(reqs)-1].LastUserText())
	}
}

// A review after a restart still sends the reviewer the user's last
// request, kept with the conversation (STATE_FILE here; the same
// snapshot a standby loads from NATS); the author's reply, kept in
// memory only, is said to be unknown. The request was in memory only,
// and a review after a restart said it was not known.
func TestReviewAfterARestartKnowsTheLastRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, claudeWrites("two"), text("Wrote two."))
	commitA(t, f.workdir, "one\n")
	cfg := f.config("--allowedTools", "Bash")
	cfg.StateFile = filepath.Join(t.TempDir(), "state.json")
	codex := otherCLIs[0].setup(t, f, &cfg, text("Fine.\nVERDICT: APPROVE"))
	first := f.start(cfg)
	first.say("/claude start", "write two in a.txt")
	first.expect(`started`)
	first.expect(`Wrote two\.`)
	first.close()

	second := f.start(cfg)
	second.say("/review codex")
	second.expect(`🔎 Codex \(reviewing Claude Code's work\):`, `Fine\.`)
	second.expect(`✅ Codex approves Claude Code's change\.`)
	second.close()
	review := codex.Requests()[0].Text()
	for _, want := range []string{"<request>\nwrite two in a.txt\n</request>", "(not known: the bot restarted since)", "-one\n+two"} {
		if !strings.Contains(review, want) {
			t.Errorf("the review's request lacks %q:\n%s", want, review)
		}
	}
}

// A pair loop, Claude writing and Codex reviewing (REVIEW_PLUGIN): it
// ends on Codex's approval, or with the findings' buttons once the
// rounds are spent, Claude fixing in between.
func TestPairClaudeWithCodex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		claude []plugintest.Reply
		codex  []plugintest.Reply
		then   []string
	}{
		{"approved", []plugintest.Reply{claudeWrites("two"), text("Wrote two.")}, []plugintest.Reply{text("Good.\nVERDICT: APPROVE")}, []string{
			`🔎 Codex \(reviewing Claude Code's work, round 1 of 2\):`,
			`✅ Codex approves Claude Code's change \(round 1 of 2\)`,
		}},
		{"rounds spent", []plugintest.Reply{claudeWrites("two"), text("Wrote two."), claudeWrites("three"), text("Wrote three.")},
			[]plugintest.Reply{text("Say three.\nVERDICT: CHANGES"), text("Say four.\nVERDICT: CHANGES")}, []string{
				`🔎 Codex \(reviewing Claude Code's work, round 1 of 2\):`,
				`🔧 Claude Code \(fixing Codex's findings, round 1 of 2\):`,
				`🔎 Codex \(reviewing Claude Code's work, round 2 of 2\):`,
				`Codex asks for changes\. Pairing stops: 2 rounds spent\.`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.claude...)
			commitA(t, f.workdir, "one\n")
			cfg := f.config("--allowedTools", "Bash")
			cfg.ReviewPlugin = "codex"
			codex := otherCLIs[0].setup(t, f, &cfg, tc.codex...)
			c := f.start(cfg)
			c.say("/claude start", "write two in a.txt")
			c.expect(`started`)
			c.expect(`Wrote two\.`)
			for _, want := range tc.then {
				c.expect(want)
			}
			c.close()
			if reqs := codex.Requests(); len(reqs) != len(tc.codex) {
				t.Errorf("Codex reviewed %d times, want %d", len(reqs), len(tc.codex))
			}
		})
	}
}

// The reverse: Codex writes, Claude Code reviews, read-only, and sees the
// patch.
func TestReviewClaudeAfterCodexWrote(t *testing.T) {
	t.Parallel()
	f := newFixture(t, text("Fine.\nVERDICT: APPROVE"))
	commitA(t, f.workdir, "one\n")
	cfg := f.config()
	cfg.Approvals = "auto" // Codex patches without asking the chat
	codex := otherCLIs[0].setup(t, f, &cfg, codexPatch("b.txt"), text("Added b.txt."))
	c := f.start(cfg)
	c.say("/codex start", "add b.txt")
	c.expect(`started`)
	c.expect(`Added b\.txt\.`)
	c.say("/review claude")
	c.expect(`🔎 Claude Code \(reviewing Codex's work\):`, `Fine\.`)
	c.expect(`✅ Claude Code approves Codex's change\.`)
	c.close()
	if len(codex.Requests()) != 2 {
		t.Errorf("Codex's model got %d requests, want 2", len(codex.Requests()))
	}
	review := f.model.Requests()[0].Text()
	if tools := f.model.Requests()[0].Tools(); slices.Contains(tools, "Write") || slices.Contains(tools, "Bash") || !slices.Contains(tools, "Read") {
		t.Errorf("Claude reviewed with the tools %v, want read-only ones", tools)
	}
	for _, want := range []string{"add b.txt", "Added b.txt.", "b.txt"} {
		if !strings.Contains(review, want) {
			t.Errorf("Claude's review request lacks %q:\n%s", want, review)
		}
	}
}

// On Telegram the findings come with their buttons: Fix with Claude Code
// sends them to Claude as its next turn.
func TestReviewButtonsOnTelegram(t *testing.T) {
	t.Parallel()
	f := newFixture(t, claudeWrites("two"), text("Wrote two."), text("Fixed it."))
	commitA(t, f.workdir, "one\n")
	cfg := f.config("--allowedTools", "Bash")
	otherCLIs[0].setup(t, f, &cfg, text("Say three.\nVERDICT: CHANGES"))
	c := runChat(t, cfg, openTelegram(t, &cfg))
	c.start("claude")
	c.say("write two in a.txt")
	c.expect(`Wrote two\.`)
	c.say("/review codex")
	c.expect(`Codex asks for changes\.`)
	c.press(owner, "Fix with Claude Code")
	c.expect(`fixing Codex.s findings`, `Fixed it\.`)
	if reqs := f.model.Requests(); !strings.Contains(reqs[len(reqs)-1].LastUserText(), "Say three.") {
		t.Errorf("Claude's fix turn lacks the findings: %q", reqs[len(reqs)-1].LastUserText())
	}
}

// On a runner both agents run there: /ask codex in a Claude conversation
// on box2 runs the runner's Codex, read-only, in the runner's workdir.
func TestAskCodexOnARunner(t *testing.T) {
	t.Parallel()
	f := newFixture(t, text("Hello from box2."))
	url := startNATS(t)
	rcfg := f.config()
	codex := otherCLIs[0].setup(t, f, &rcfg, codexPatch("asked.txt"), text("Codex on box2."))
	startRunnerBot(t, url, rcfg)
	c := f.start(gatewayConfig(url, t.TempDir()))
	c.awaitBox2()
	c.say("/claude start box2:"+f.workdir, "say hello")
	c.expect(`started in box2:`)
	c.expect(`Hello from box2\.`)
	c.say("/ask codex what is here?")
	c.expect(`🤝 Codex on box2 \(asked\):`, `Codex on box2\.`)
	c.say("/status")
	c.expect(`Helpers: Codex (on box2 )?\(session [0-9a-f]{8}\)`)
	c.close()
	if reqs := codex.Requests(); len(reqs) == 0 || !strings.Contains(reqs[0].Text(), "what is here?") {
		t.Error("the runner's Codex did not get the question")
	}
	if _, err := os.Stat(filepath.Join(f.workdir, "asked.txt")); !os.IsNotExist(err) {
		t.Errorf("the read-only /ask on the runner wrote asked.txt (%v)", err)
	}
}

// awaitBox2 waits until the gateway on c has heard runner box2.
func (c *console) awaitBox2() {
	c.t.Helper()
	for {
		c.say("/runners")
		if got := c.expect(`Runners|No runner`); strings.Contains(got, "box2 (online)") {
			return
		}
	}
}

// awaitFollowing waits until a gateway on the NATS server at url follows
// a turn on a runner: its record there has a turn message applied, so
// the runner's answer to the turn's start is in (a gateway that stops
// before it stops the turn, not knowing whether it started).
func awaitFollowing(t *testing.T, url string) {
	t.Helper()
	if !awaitKV(t, url, "jakebot_turns", ">", func(v []byte) bool {
		var rec struct{ Seq int }
		return json.Unmarshal(v, &rec) == nil && rec.Seq > 0
	}) {
		t.Fatal("no gateway followed a turn on a runner")
	}
}

// A gateway restarted while /ask codex runs on box2 follows the helper's
// turn there as it follows the conversation's own: Codex's answer comes,
// labelled as the helper's, and its session is kept as the helper's,
// the conversation's own (Claude's) unchanged. Before, the next gateway
// took the turn for a stale one of another plugin and stopped it there
// without a word.
func TestAskCodexOnARunnerOutlivesAGatewayRestart(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	f := newFixture(t, text("Hello from box2."))
	url := startNATS(t)
	rcfg := f.config()
	codex := otherCLIs[0].setup(t, f, &rcfg, plugintest.Reply{Text: []string{"Codex on box2, after the restart."}, Hold: hold})
	startRunnerBot(t, url, rcfg)
	gcfg := gatewayConfig(url, t.TempDir())
	gcfg.ShutdownGrace = time.Millisecond // the turn goes on on box2: nothing to wait for
	ctx, restart := context.WithCancel(context.Background())
	defer restart()
	c := f.startConsole(ctx, gcfg, false)
	c.awaitBox2()
	c.say("/claude start box2:"+f.workdir, "say hello", "/status")
	c.expect(`started in box2:`)
	c.expect(`Hello from box2\.`)
	own := sessionRE.FindString(c.expect(`Session: ` + sessionRE.String()))
	c.say("/ask codex what is here?")
	<-codex.Arrived() // Codex's turn runs on box2, its model held
	awaitFollowing(t, url)

	restart()
	if err := <-c.done; err != nil {
		t.Fatalf("the gateway exited with %v", err)
	}
	var before []string
	for len(c.out) > 0 {
		before = append(before, <-c.out)
	}
	if !slices.ContainsFunc(before, func(r string) bool {
		return strings.Contains(r, "🤝 Codex on box2 (asked):") && strings.Contains(r, "goes on on box2")
	}) {
		t.Errorf("the restarting gateway did not say the helper's turn goes on: %q", before)
	}

	c = f.start(gcfg)
	close(hold)
	c.expect(`🤝 Codex on box2 \(asked\):`, `continued: the bot restarted during this turn`, `Codex on box2, after the restart\.`)
	c.say("/status")
	status := c.expect(`Helpers: Codex (on box2 )?\(session [0-9a-f]{8}\)`)
	if !strings.Contains(status, "Session: "+own) {
		t.Errorf("the conversation's own session is no longer Claude's %s:\n%s", own, status)
	}
	c.close()
	if n := len(codex.Requests()); n != 1 {
		t.Errorf("Codex's model got %d requests, want the one turn, followed and not run again", n)
	}
}

// /stop in the middle of a pair loop stops Codex's running review, and
// the loop with it: no process is left, nothing follows.
func TestStopInThePairLoop(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	defer close(hold)
	f := newFixture(t, claudeWrites("two"), text("Wrote two."))
	commitA(t, f.workdir, "one\n")
	cfg := f.config("--allowedTools", "Bash")
	cfg.ReviewPlugin = "codex"
	codex := otherCLIs[0].setup(t, f, &cfg, plugintest.Reply{Text: []string{"never"}, Hold: hold})
	c := f.startTyped(cfg)
	c.say("/claude start", "write two in a.txt")
	c.expect(`started`)
	c.expect(`Wrote two\.`)
	<-codex.Arrived() // Codex reviews, waiting on its model
	c.say("/stop")
	both := c.expect() + c.expect()
	for _, want := range []string{"Stopping the pair loop and its running turn.", "🔎 Codex (reviewing Claude Code's work, round 1 of 2):", "Stopped."} {
		if !strings.Contains(both, want) {
			t.Errorf("the bot wrote %q, want %q in it", both, want)
		}
	}
	if pids := f.alive(); len(pids) != 0 {
		t.Errorf("processes %v still running after /stop", pids)
	}
	c.say("/status")
	c.expect(`Pairing with Codex: up to 2 rounds`)
	c.close()
}

// A standby that takes over from a gateway cut off from NATS while /ask
// codex runs on box2 follows the helper's turn as the restarted gateway
// does, and does not report its message as lost: the turn goes on.
func TestStandbyFollowsAnAskOnARunner(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	f := newFixture(t)
	url := startNATS(t)
	rcfg := f.config()
	codex := otherCLIs[0].setup(t, f, &rcfg, plugintest.Reply{Text: []string{"Codex answers gw-b."}, Hold: hold})
	startRunnerBot(t, url, rcfg)
	srv := telegramtest.New(t)
	link := remotetest.NewLink(t, url)
	a := runChat(t, gatewayOn(f, "gw-a", link.URL(), srv), &telegramDriver{t: t, srv: srv, logs: &logScan{t: t}})
	a.logs.waitLine(regexp.MustCompile(`lease taken: this gateway is active" gateway=(gw-a)`))
	b := runChat(t, gatewayOn(f, "gw-b", url, srv), &telegramDriver{t: t, srv: srv, logs: &logScan{t: t}})
	b.logs.waitLine(regexp.MustCompile(`standing by: another gateway is active" gateway=gw-b active=(gw-a)`))
	d := &telegramDriver{t: t, srv: srv}
	c := &chat{t: t, d: d, logs: a.logs}
	startOnBox2(c, d, f.workdir)
	awaitState(t, url, "box2")
	c.say("/ask codex what is here?")
	<-codex.Arrived()
	awaitFollowing(t, url)

	link.Cut()
	b.logs.waitLine(regexp.MustCompile(`lease taken: this gateway is active" gateway=(gw-b)`))
	link.Heal()
	close(hold)
	c = on(b, c)
	c.expect(`🤝 Codex on box2 .asked.:`, `continued`, `Codex answers gw-b\.`, `— \d+\.\ds`) // its footer: the turn is over
	c.say("/status")
	c.expect(`Helpers: Codex (on box2 )?\(session [0-9a-f]{8}\)`)
	if got := c.dump(); strings.Contains(got, "A turn was lost") {
		t.Errorf("gw-b reported the helper's turn it follows as lost:\n%s", got)
	}
	if n := len(srv.Conflicts()); n != 0 {
		t.Errorf("two gateways polled Telegram at once: %d conflicts", n)
	}
}

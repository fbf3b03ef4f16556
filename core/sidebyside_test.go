package core_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// sideFixture is a router with an author plugin "fake", which writes
// a.txt for a prompt "write <text>", echoes any other, and
// fixes findings by writing "four"; and helpers:
// "rev", read-only, which answers with the reviews a test pushes (else
// an echo), and "ro", which has no read-only mode.
type sideFixture struct {
	*routerFixture
	rev     *plugintest.Scripted
	mu      sync.Mutex
	reviews []string
	repo    string
}

func newSideFixture(t *testing.T, configure func(*core.RouterConfig)) *sideFixture {
	t.Helper()
	f := &sideFixture{}
	f.rev = &plugintest.Scripted{PluginID: "rev", PluginName: "Rev", ReadOnly: "its test sandbox", Script: func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		f.mu.Lock()
		text := "echo: " + turn.Prompt
		if len(f.reviews) > 0 {
			text, f.reviews = f.reviews[0], f.reviews[1:]
		}
		f.mu.Unlock()
		emit(core.TextEvent(text))
		return core.TurnResult{SessionID: "rev-session"}, nil
	}}
	author := func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		text, ok := strings.CutPrefix(turn.Prompt, "write ")
		if strings.HasPrefix(turn.Prompt, "Rev reviewed your change") {
			text, ok = "four", true // a fix
		}
		if ok {
			if err := os.WriteFile(filepath.Join(turn.Workdir, "a.txt"), []byte(text+"\n"), 0o644); err != nil {
				return core.TurnResult{}, err
			}
			emit(core.TextEvent("wrote " + text))
			return core.TurnResult{SessionID: "author-session"}, nil
		}
		return echo(ctx, turn, emit)
	}
	f.routerFixture = newRouterFixtureWith(t, author, nil, func(cfg *core.RouterConfig) {
		fake, _ := cfg.Plugins.Get("fake")
		reg, err := core.NewRegistry(fake, f.rev, &plugintest.Scripted{PluginID: "ro", PluginName: "Ro"})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Plugins = reg
		if configure != nil {
			configure(cfg)
		}
	})
	f.repo = gitRepo(t, f.root)
	return f
}

// review pushes the reviewer's next answers.
func (f *sideFixture) review(texts ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reviews = append(f.reviews, texts...)
}

func (f *sideFixture) start() {
	f.t.Helper()
	f.say("alice", "/fake start "+f.repo)
	f.expect("conversation started")
}

// /ask runs a helper's turn, labelled, read-only unless --write, in the
// helper's own session kept for the next /ask; the conversation stays
// the author's.
func TestAskRunsAHelperTurnInItsOwnSession(t *testing.T) {
	t.Parallel()
	f := newSideFixture(t, nil)
	f.start()
	f.say("alice", "hello")
	f.expect("echo: hello")
	f.say("alice", "/ask rev what do you think?")
	f.expectAll("🤝 Rev (asked):", "echo: what do you think?")
	f.say("alice", "/ask rev --write and now?")
	f.expectAll("🤝 Rev (asked, may write):", "echo: and now?")
	turns := f.rev.Turns()
	if len(turns) != 2 || turns[0].SessionID != "" || turns[1].SessionID != "rev-session" || !turns[0].ReadOnly || turns[1].ReadOnly {
		t.Fatalf("reviewer's turns = %+v, want a read-only new session, then rev-session with --write", turns)
	}
	conv, _ := f.router.Conversations().Get(f.key("alice"))
	if conv.Plugin != "fake" || conv.SessionID != "tok-hello" || len(conv.Helpers) != 1 || conv.Helpers[0] != (core.Helper{Plugin: "rev", SessionID: "rev-session"}) {
		t.Fatalf("conversation = %+v, want fake's still, with rev's session as a helper's", conv)
	}
	f.say("alice", "/status")
	f.expectAll("Helpers: Rev (session rev-sess")
}

// What /ask and /review refuse, and why.
func TestAskAndReviewRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, say, want string
		noConv          bool
	}{
		{"no conversation", "/ask rev hi", "No conversation here yet", true},
		{"unknown plugin", "/ask nobody hi", `no plugin "nobody" here`, false},
		{"its own plugin", "/ask fake hi", "Fake fake is this conversation's own agent", false},
		{"no question", "/ask rev", "usage: /ask <plugin> [--write] <question>", false},
		{"no read-only mode", "/ask ro hi", "Ro has no read-only mode here, so it cannot do this without the right to write; /ask ro --write … lets it write", false},
		{"review by one without read-only", "/review ro", "Ro has no read-only mode here", false},
		{"review by its own", "/review fake", "Fake fake is this conversation's own agent", false},
		{"nothing to review", "/review", "Nothing to review: no change since the last review", false},
		{"findings gone", "/review fix 12345678", "those findings no longer wait", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSideFixture(t, nil)
			if !tc.noConv {
				f.start()
			}
			f.say("alice", tc.say)
			f.expect(tc.want)
			if n := len(f.rev.Turns()); n != 0 {
				t.Errorf("the reviewer ran %d turns", n)
			}
		})
	}
}

// /review sends the reviewer, read-only, the author's last exchange and
// the diff since the last review; its findings come with the buttons,
// and Fix sends them to the author as its next turn. A second /review
// sees only what changed since.
func TestReviewSendsTheDiffAndOffersTheFindings(t *testing.T) {
	t.Parallel()
	f := newSideFixture(t, nil)
	f.start()
	f.say("alice", "write two")
	f.expect("wrote two")
	f.review("a.txt should say three\nVERDICT: CHANGES")
	f.say("alice", "/review")
	f.expectAll("🔎 Rev (reviewing Fake fake's work):", "a.txt should say three")
	offer := f.next()
	if !strings.Contains(offer, "🔎 Rev asks for changes.") || !strings.Contains(offer, "/review fix ") {
		t.Fatalf("offer = %q", offer)
	}
	turn := f.rev.Turns()[0]
	for _, want := range []string{"write two", "wrote two", "-one\n+two", "VERDICT: APPROVE"} {
		if !strings.Contains(turn.Prompt, want) {
			t.Errorf("review prompt lacks %q:\n%s", want, turn.Prompt)
		}
	}
	if !turn.ReadOnly {
		t.Error("the review was not read-only")
	}
	id := strings.Fields(offer[strings.Index(offer, "/review fix ")+len("/review fix "):])[0]
	f.say("alice", "/review fix "+id)
	f.expectAll("🔧 Fake fake (fixing Rev's findings):", "wrote four")
	if p := f.plugin.Turns()[1].Prompt; !strings.Contains(p, "Rev reviewed your change") || !strings.Contains(p, "a.txt should say three") {
		t.Errorf("the fix's prompt lacks the findings:\n%s", p)
	}
	f.say("alice", "/review fix "+id)
	f.expect("those findings no longer wait")

	f.review("fine\nVERDICT: APPROVE")
	f.say("alice", "/review rev")
	f.expectAll("🔎 Rev", "fine")
	f.expect("✅ Rev approves Fake fake's change.")
	if p := f.rev.Turns()[1].Prompt; !strings.Contains(p, "+four") || strings.Contains(p, "+two") {
		t.Errorf("second review's prompt is not the change since the first:\n%s", p)
	}
	f.say("alice", "/review")
	f.expect("Nothing to review: no change since the last review")
}

// A pair loop reviews each author turn that changed files and sends the
// findings back until the reviewer approves, or the rounds are spent.
func TestPairLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		reviews []string
		// then is what the chat shows after the author's first turn.
		then []string
	}{
		{"approved at once", []string{"good\nVERDICT: APPROVE"}, []string{
			"🔎 Rev (reviewing Fake fake's work, round 1 of 2):",
			"✅ Rev approves Fake fake's change (round 1 of 2).",
		}},
		{"approved in round 2", []string{"say four\nVERDICT: CHANGES", "good\n**VERDICT: APPROVE**"}, []string{
			"🔎 Rev (reviewing Fake fake's work, round 1 of 2):",
			"🔧 Fake fake (fixing Rev's findings, round 1 of 2):",
			"🔎 Rev (reviewing Fake fake's work, round 2 of 2):",
			"✅ Rev approves Fake fake's change (round 2 of 2).",
		}},
		{"rounds spent", []string{"say four\nVERDICT: CHANGES", "still wrong"}, []string{
			"🔎 Rev (reviewing Fake fake's work, round 1 of 2):",
			"🔧 Fake fake (fixing Rev's findings, round 1 of 2):",
			"🔎 Rev (reviewing Fake fake's work, round 2 of 2):",
			"Rev gave no verdict",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSideFixture(t, func(cfg *core.RouterConfig) { cfg.ReviewPlugin = "rev" })
			f.start()
			f.review(tc.reviews...)
			// The fix writes again, so that its turn changes files too.
			f.say("alice", "write two")
			f.expect("wrote two")
			for _, want := range tc.then {
				f.expect(want)
			}
			f.router.Wait()
			f.say("alice", "/status")
			f.expect("Pairing with Rev: up to 2 rounds after each Fake fake turn")
		})
	}
}

// /stop in the middle of a pair loop stops its running turn and the
// loop: nothing follows.
func TestStopEndsThePairLoop(t *testing.T) {
	t.Parallel()
	f := newSideFixture(t, nil)
	f.rev.Script = f.rev.HandOver
	f.start()
	f.say("alice", "/pair rev 3")
	f.expect("Pairing with Rev: after each Fake fake turn that changes files, Rev reviews it (read-only: its test sandbox)")
	f.say("alice", "write two")
	f.expect("wrote two")
	f.rev.Next(t)
	f.say("alice", "/status")
	f.expect("Pairing with Rev: round 1 of 3, Rev reviewing")
	f.say("alice", "/stop")
	f.router.Wait()
	// The answer to /stop and the stopped review's reply, in either order.
	both := f.next() + f.next()
	for _, want := range []string{"Stopping the pair loop and its running turn.", "🔎 Rev (reviewing Fake fake's work, round 1 of 3):", "Stopped."} {
		if !strings.Contains(both, want) {
			t.Errorf("the bot wrote %q, want %q in it", both, want)
		}
	}
	f.say("alice", "/status")
	f.expect("Pairing with Rev: up to 3 rounds")
	f.say("alice", "/pair off")
	f.expect("Pairing is off.")
}

// The findings a reviewer sends the author are the bot's, not the
// person's voice: the fix runs in no mode that skips approvals, even in
// an admin's conversation set to one.
func TestAFixRunsNoBypassMode(t *testing.T) {
	t.Parallel()
	f := newSideFixture(t, func(cfg *core.RouterConfig) { cfg.Access.Admin("fake", "alice") })
	f.plugin.CLIModes = []core.Mode{{Name: "yolo", Help: "runs every tool", Bypass: true}}
	f.start()
	f.say("alice", "/mode yolo")
	f.expect("yolo")
	f.say("alice", "write two")
	f.expect("wrote two")
	f.review("say three\nVERDICT: CHANGES")
	f.say("alice", "/review")
	f.expect("say three")
	offer := f.next()
	id := strings.Fields(offer[strings.Index(offer, "/review fix ")+len("/review fix "):])[0]
	f.say("alice", "/review fix "+id)
	f.expect("wrote four")
	turns := f.plugin.Turns()
	if first, fix := turns[0], turns[len(turns)-1]; first.Mode != "yolo" || fix.Mode != "" {
		t.Errorf("modes: the person's turn %q, the fix %q; want yolo, then none", first.Mode, fix.Mode)
	}
}

// A helper's turn refused by its CLI's usage window is not sent again at
// the reset as if the person had written it: no continuation.
func TestARefusedHelperTurnIsNotContinued(t *testing.T) {
	t.Parallel()
	f := newSideFixture(t, nil)
	f.rev.Script = refusedOnce(false)
	f.start()
	f.say("alice", "/ask rev hi")
	f.expectAll("🤝 Rev (asked):", "5-hour limit")
	f.say("alice", "/schedules")
	f.expect("Nothing is scheduled here.")
}

// Paired in a workdir outside git, the chat hears once that pairing
// cannot review, not after every turn.
func TestPairingOutsideGitSaysSoOnce(t *testing.T) {
	t.Parallel()
	f := newSideFixture(t, func(cfg *core.RouterConfig) { cfg.ReviewPlugin = "rev" })
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "hello")
	f.expect("echo: hello")
	f.expect("Pairing cannot review: ")
	f.say("alice", "again")
	f.expect("echo: again")
	f.router.Wait()
	f.say("alice", "/status")
	f.expect("Pairing with Rev: up to 2 rounds")
	if n := len(f.rev.Turns()); n != 0 {
		t.Errorf("the reviewer ran %d turns", n)
	}
}

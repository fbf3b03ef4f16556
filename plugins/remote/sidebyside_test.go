package remote_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jake-bot/jake-bot/core"
)

// A turn of agents side by side (issue 44) left running on a runner is
// followed by the next gateway as what it was (issue 45's restart path):
// a helper's, labelled as it was, its session the helper's, and what
// comes after it (a review's findings, the pair loop's next step) comes
// after it still.

// newSideWorld is a world with box2, which has a helper plugin "codex",
// and the admin's conversation with its "claude" in box2's app, a git
// repository with a.txt committed.
func newSideWorld(t *testing.T) (*world, *runner) {
	t.Helper()
	w := newWorld(t)
	box2 := w.startRunner(runnerOpts{name: "box2", codex: true})
	w.startGateway()
	w.waitOnline("box2")
	writeFile(t, filepath.Join(box2.app(), "a.txt"), []byte("one\n"))
	gitInit(t, box2.app())
	w.startOn(box2)
	return w, box2
}

// checkSessions checks that the admin's conversation kept the helper's
// session as its helper's and its own as the author's.
func (w *world) checkSessions() {
	w.t.Helper()
	conv, _ := w.convs.Get(key(admin))
	if conv.Plugin != "claude" || conv.SessionID != session || len(conv.Helpers) != 1 ||
		conv.Helpers[0].Plugin != "codex" || conv.Helpers[0].SessionID != helperSession {
		w.t.Errorf("the conversation is %s in session %s with helpers %+v; want claude's %s, codex's %s as a helper's",
			conv.Plugin, conv.SessionID, conv.Helpers, session, helperSession)
	}
}

// /review codex, running on box2 when the gateway is killed or
// restarted: the next gateway shows the review labelled as the
// reviewer's, records what it reviewed and offers its findings, which
// Fix sends to the author.
func TestReviewOnARunnerFollowedAfterAGatewayRestart(t *testing.T) {
	t.Parallel()
	for _, crash := range []bool{true, false} {
		t.Run(map[bool]string{true: "killed", false: "restarted"}[crash], func(t *testing.T) {
			t.Parallel()
			w, box2 := newSideWorld(t)
			w.say("write two")
			w.expect("wrote two")
			w.say("/review codex")
			if turn := recv(t, box2.codex.Started(), "the review on box2"); !turn.ReadOnly || turn.Side != nil {
				t.Errorf("the review reached box2 read-only %v, with the side %s; want read-only, no side (it stays with the gateway)", turn.ReadOnly, turn.Side)
			}
			w.expect("Looking.") // the gateway follows the turn: it started there
			w.gw.stop(crash)
			box2.answers <- "a.txt should say three.\nVERDICT: CHANGES"
			w.startGateway()
			w.expect("🔎 Codex on box2 (reviewing Claude Code's work):", "continued", "a.txt should say three.")
			offer := w.expect("asks for changes", "/review fix")
			w.checkSessions()
			if conv, _ := w.convs.Get(key(admin)); len(conv.Reviewed) == 0 {
				t.Error("the followed review did not record what it reviewed")
			}
			w.say(regexp.MustCompile(`/review fix [0-9a-f]{8}`).FindString(offer))
			w.expect("🔧 Claude Code (fixing codex's findings):", "wrote fixed")
		})
	}
}

// A pair loop whose review runs on box2 when the gateway is killed goes
// on with the next gateway: the review's findings go back to the author
// as round 1's fix, round 2 reviews the fix and approves.
func TestPairLoopOnARunnerGoesOnAfterAGatewayRestart(t *testing.T) {
	t.Parallel()
	w, box2 := newSideWorld(t)
	w.say("/pair codex 2")
	w.expect("Pairing with Codex on box2")
	w.say("write two")
	w.expect("wrote two")
	recv(t, box2.codex.Started(), "round 1's review on box2")
	w.expect("Looking.")
	w.gw.stop(true)
	w.startGateway()
	w.say("/status")
	w.expect("Pairing with codex: round 1 of 2, codex reviewing")
	box2.answers <- "a.txt should say fixed.\nVERDICT: CHANGES"
	w.expect("🔎 Codex on box2 (reviewing Claude Code's work, round 1 of 2):", "continued", "a.txt should say fixed.")
	w.expect("🔧 Claude Code (fixing codex's findings, round 1 of 2):", "wrote fixed")
	if turn := recv(t, box2.codex.Started(), "round 2's review on box2"); !strings.Contains(turn.Prompt, "+fixed") {
		t.Errorf("round 2 did not review the fix:\n%s", turn.Prompt)
	}
	box2.answers <- "Good.\nVERDICT: APPROVE"
	w.expect("🔎 Codex on box2 (reviewing Claude Code's work, round 2 of 2):", "Good.")
	w.expect("✅ codex approves Claude Code's change (round 2 of 2).")
	w.checkSessions()
}

// A helper's turn in a record written by a gateway of before the side was
// kept (no "side") is stopped on its runner, as it was then: the next
// gateway cannot tell it from a stale turn of another plugin.
func TestAHelperTurnRecordedWithoutItsSideIsStopped(t *testing.T) {
	t.Parallel()
	w, box2 := newSideWorld(t)
	w.say("/ask codex what is here?")
	recv(t, box2.codex.Started(), "the /ask on box2")
	w.expect("Looking.")
	w.gw.stop(false)
	ctx := context.Background()
	js, _ := jetstream.New(connect(t, w.url))
	kv, err := js.KeyValue(ctx, "jakebot_turns")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("turn records %q (%v), want the /ask's", keys, err)
	}
	e, err := kv.Get(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		t.Fatal(err)
	}
	if side, _ := rec["side"].(map[string]any); side["helper"] != "codex" || side["label"] != "🤝 Codex on box2 (asked):" {
		t.Errorf("the record's side is %v, want the helper codex and its label", rec["side"])
	}
	delete(rec, "side")
	data, _ := json.Marshal(rec)
	if _, err := kv.Put(ctx, keys[0], data); err != nil {
		t.Fatal(err)
	}
	w.startGateway()
	if cause := recv(t, box2.stopped, "the /ask to stop on box2"); cause != core.ErrStopped {
		t.Errorf("the helper's turn ended by %v, want stopped", cause)
	}
	w.say("/status")
	w.expect("State: idle")
}

package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// asking is a plugin turn that asks before running Bash, once per turn,
// and reports the answer it got.
func asking(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	if !turn.Ask {
		emit(core.TextEvent("not asked"))
		return core.TurnResult{SessionID: "tok"}, nil
	}
	got := make(chan core.Answer, 1)
	emit(core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "`rm -rf build`",
		Answer: func(a core.Answer) { got <- a }}})
	select {
	case a := <-got:
		emit(core.TextEvent(map[core.Decision]string{core.Deny: "denied", core.Allow: "allowed", core.AllowAlways: "always"}[a.Decision] + " by " + a.By + ": " + a.Reason))
	case <-ctx.Done():
		return core.TurnResult{}, ctx.Err()
	}
	return core.TurnResult{SessionID: "tok"}, nil
}

// newAskingFixture is a router asking about Bash in a shared thread, its
// approval timeout on the manual clock timers.
func newAskingFixture(t *testing.T, timeout time.Duration) (f *routerFixture, say func(from, text string), timers *coretest.ManualClock) {
	t.Helper()
	timers = coretest.NewManualClock()
	f = newRouterFixtureWith(t, asking, nil, func(cfg *core.RouterConfig) {
		cfg.Ask, cfg.ApprovalTimeout, cfg.Timers = true, timeout, timers
		cfg.Access.Admin("fake", "carol")
	})
	shared := core.ConversationKey{Platform: "fake", Channel: "c", Thread: "t"}
	say = func(from, text string) {
		f.handle(context.Background(), core.Message{Key: shared, From: from, Text: text})
	}
	say("alice", "/fake start")
	f.expect("conversation started")
	return f, say, timers
}

// A tool call is asked about in the chat; only the turn's author or an
// admin answers it, by button command or plain text.
func TestRouterAsksTheAuthor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answers []string // sent in order after the question
		replies []string // what the bot says to each answer
		result  string   // what the plugin got
	}{
		{"yes", []string{"y"}, []string{"Allowed Bash (alice)."}, "allowed by alice: "},
		{"allow button", []string{"/allow q1"}, []string{"Allowed Bash (alice)."}, "allowed by alice: "},
		{"always button", []string{"/allow q1 always"}, []string{"always from now on"}, "always by alice: "},
		{"no", []string{"n"}, []string{"Denied Bash (alice): denied by alice"}, "denied by alice: denied by alice"},
		{"reason", []string{"not today, thanks"}, []string{"Denied Bash (alice): not today, thanks"}, "denied by alice: not today, thanks"},
		{"deny with reason", []string{"/deny q1 use make clean"}, []string{"Denied Bash (alice): use make clean"}, "denied by alice: use make clean"},
		{"a stranger, then the author", []string{"bob:y", "/deny q1"}, []string{"Only the author of this turn (alice) or an admin can answer.", "Denied Bash (alice)"}, "denied by alice: denied by alice"},
		{"an admin", []string{"carol:/allow"}, []string{"Allowed Bash (carol)."}, "allowed by carol: "},
		{"a stale button", []string{"/allow q9", "y"}, []string{"no question is waiting", "Allowed Bash (alice)."}, "allowed by alice: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, say, _ := newAskingFixture(t, time.Hour)
			say("alice", "clean up")
			q := f.next()
			if !strings.Contains(q, "Allow Bash?\n`rm -rf build`") || !strings.Contains(q, "Only alice or an admin can answer (q1)") ||
				!strings.Contains(q, "[y]es / [a]lways / [n]o") {
				t.Fatalf("question = %q", q)
			}
			for i, text := range tc.answers {
				from := "alice"
				if who, rest, ok := strings.Cut(text, ":"); ok && !strings.HasPrefix(text, "/") {
					from, text = who, rest
				}
				say(from, text)
				if got := f.next(); !strings.Contains(got, tc.replies[i]) {
					t.Fatalf("answer %q from %s: bot said %q, want %q", text, from, got, tc.replies[i])
				}
			}
			f.expect(tc.result)
			f.router.Wait()
		})
	}
}

// "Always allow" holds for the rest of the conversation: the next call of
// the tool is allowed without a question, and /status says so.
func TestRouterAlwaysAllowsForTheConversation(t *testing.T) {
	t.Parallel()
	f, say, _ := newAskingFixture(t, time.Hour)
	say("alice", "first")
	f.expect("Allow Bash?")
	say("alice", "a")
	f.expect("always from now on")
	f.expect("always by alice")
	f.router.Wait()
	say("alice", "second")
	f.expect("allowed by always allowed in this conversation")
	f.router.Wait()
	say("alice", "/status")
	f.expect("Always allowed: Bash")
	say("alice", "/conversation end")
	f.expect("Conversation ended")
	say("alice", "/fake start")
	f.expect("conversation started")
	say("alice", "/status")
	f.expect("Always allowed: none")
}

// Nobody answers: the call is denied when the approval timeout passes, and
// the chat says so; not a moment before.
func TestRouterDeniesWhenNobodyAnswers(t *testing.T) {
	t.Parallel()
	f, say, timers := newAskingFixture(t, 10*time.Minute)
	say("alice", "clean up")
	f.expect("Allow Bash?")
	<-timers.Waiting() // the question's timer is set
	// The timer fires within Advance: what the bot writes next shows
	// whether it did.
	timers.Advance(10*time.Minute - time.Nanosecond)
	say("alice", "/status")
	f.expect("Fake fake in ")
	timers.Advance(time.Nanosecond)
	f.expect("Denied Bash: nobody answered within 10m0s.")
	f.expect("denied by timeout: nobody answered within 10m0s")
	f.router.Wait()
	say("alice", "y") // no question waits: a plain message is a turn again
	f.expect("Allow Bash?")
	<-timers.Waiting()
	timers.AdvanceToNext()
	f.expect("Denied Bash: nobody answered within 10m0s.")
	f.expect("denied by timeout")
	f.router.Wait()
}

// The agent's own question offers its options; a number picks one, other
// words are the answer as they are.
func TestRouterPutsTheAgentsQuestion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ answer, want string }{
		{"2", "SQLite"},
		{"/answer q1 1", "Postgres"},
		{"whatever is simplest", "whatever is simplest"},
	} {
		got := make(chan core.Answer, 1)
		ask := func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
			emit(core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "AskUserQuestion", Summary: "Which database?",
				Options: []string{"Postgres", "SQLite"}, Answer: func(a core.Answer) { got <- a }}})
			emit(core.TextEvent("picked " + (<-got).Choice))
			return core.TurnResult{}, nil
		}
		f := newRouterFixtureWith(t, ask, nil, func(cfg *core.RouterConfig) { cfg.ApprovalTimeout = time.Hour })
		f.say("alice", "/fake start")
		f.expect("conversation started")
		f.say("alice", "pick one")
		q := f.next()
		if !strings.Contains(q, "❓ Which database?\n1. Postgres\n2. SQLite") || !strings.Contains(q, "Answer with a number") {
			t.Fatalf("question %q", q)
		}
		f.say("alice", tc.answer)
		f.expect("Answered (alice): " + tc.want)
		f.expect("picked " + tc.want)
		f.router.Wait()
	}
}

// A question of a turn a schedule sent, while nobody may be watching, is
// denied at once under UNATTENDED_APPROVALS=deny (the default), and the
// chat says so; under ask it waits for an answer as any other (issue 30).
func TestUnattendedQuestions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		setting string
		says    []string // after the schedule's note
		answer  string
		result  string
	}{
		{"", []string{"Denied Bash: this turn was sent on alice's behalf while nobody may be watching, and UNATTENDED_APPROVALS=deny"},
			"", "denied by UNATTENDED_APPROVALS: nobody is watching this scheduled turn"},
		{core.UnattendedAsk, []string{"❓ Allow Bash?"}, "y", "allowed by alice"},
	} {
		clock := coretest.NewManualClock()
		f := newRouterFixtureWith(t, asking, clock, func(cfg *core.RouterConfig) {
			cfg.Ask, cfg.UnattendedApprovals = true, tc.setting
		})
		f.say("alice", "/fake start")
		f.expect("conversation started")
		f.say("alice", "/at 1m clean up")
		f.expect("Scheduled #1")
		clock.Advance(time.Minute)
		f.expect("⏰ Schedule #1 (once) sends: clean up")
		for _, want := range tc.says {
			f.expect(want)
		}
		if tc.answer != "" {
			f.say("alice", tc.answer)
			f.expect("Allowed Bash")
		}
		f.expect(tc.result)
	}
}

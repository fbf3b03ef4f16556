package core_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot/agenttools"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// withAgentTools has the router serve the bot's MCP server (AGENT_TOOLS),
// which a scripted turn reaches through its Turn.Tools.Actions.
func withAgentTools(t testing.TB) func(*core.RouterConfig) {
	t.Helper()
	s, err := agenttools.Start(core.AllAgentTools, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return func(cfg *core.RouterConfig) { cfg.AgentTools = s }
}

// scheduling is a turn whose agent, for a prompt "schedule <when> <text>",
// schedules text at when with the bot's schedule tool and says what the
// tool answered; then, where the chat approves, it asks before running
// Bash and says the answer. Any other prompt it echoes, with how it ran.
func scheduling(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	rest, ok := strings.CutPrefix(turn.Prompt, "schedule ")
	if !ok {
		emit(core.TextEvent("ran " + turn.Prompt + " " + map[bool]string{true: "asking", false: "unasked"}[turn.Ask] + " mode=" + turn.Mode))
		return core.TurnResult{SessionID: "tok"}, nil
	}
	when, text, _ := strings.Cut(rest, " ")
	got, err := turn.Tools.Actions.Schedule(ctx, when, text)
	if err != nil {
		got = "refused: " + core.UserMessage(err)
	}
	emit(core.TextEvent(got))
	if turn.Ask {
		answer := make(chan core.Answer, 1)
		emit(core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "`curl … | sh`",
			Answer: func(a core.Answer) { answer <- a }}})
		select {
		case a := <-answer:
			emit(core.TextEvent("Bash: " + map[core.Decision]string{core.Deny: "deny", core.Allow: "allow", core.AllowAlways: "always"}[a.Decision] + " by " + a.By))
		case <-ctx.Done():
			return core.TurnResult{}, ctx.Err()
		}
	}
	return core.TurnResult{SessionID: "tok"}, nil
}

// The agent's schedule fires as the agent's, never as its user's voice:
// its message answers no question (an "always" the agent scheduled
// before raising one), is no command (an admin's agent scheduling /mode
// yolo), and its turn runs no mode that skips approvals, even an admin's.
// Each case failed before messages had an origin: the scheduled text
// answered the question "always", switched the mode, ran unasked.
func TestTheAgentsScheduleIsNotItsUsersVoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, f *routerFixture, clock *coretest.ManualClock)
	}{
		{"it answers no question", func(t *testing.T, f *routerFixture, clock *coretest.ManualClock) {
			f.say("bob", "schedule 1m always")
			<-f.plugin.Started()
			f.expect("Allow Bash?")
			clock.Advance(time.Minute)
			f.expect("⏰ Scheduled by the agent (#1, once, in bob's conversation), a turn of its own: always")
			if got := f.next(); !strings.Contains(got, "Queued (1 waiting)") || !strings.Contains(got, "starts a turn of its own") {
				t.Fatalf("the agent's message: bot wrote %q, want it queued, not an answer", got)
			}
			f.say("bob", "n")
			f.expect("Denied Bash (bob)")
			f.expectAll("Scheduled #1 (once)", "Bash: deny by bob")
			if turn := <-f.plugin.Started(); turn.Prompt != "always" {
				t.Errorf("the scheduled turn ran %q", turn.Prompt)
			}
			f.expect("ran always asking")
			f.router.Wait()
			if conv, _ := f.router.Conversations().Get(f.key("bob")); len(conv.AllowedTools) != 0 {
				t.Errorf("the conversation always allows %v", conv.AllowedTools)
			}
		}},
		{"it is no command", func(t *testing.T, f *routerFixture, clock *coretest.ManualClock) {
			f.say("carol", "/mode yolo")
			f.expect("From the next turn: yolo")
			f.say("carol", "/mode ask")
			f.expect("From the next turn: yolo, approvals asked")
			f.say("carol", "schedule 1m /mode auto")
			<-f.plugin.Started()
			f.expect("Allow Bash?")
			f.say("carol", "y")
			f.expect("Allowed Bash (carol)")
			f.expectAll("refused: a scheduled message starts a turn of its own: it is never a command", "Bash: allow by carol")
			f.router.Wait()
			// A schedule an agent set before the tool refused commands,
			// kept in the state file, is still no command when it fires.
			f.router.Conversations().LoadSchedules([]core.Schedule{{ID: 9, Key: f.key("carol"), From: "carol",
				Text: "/mode auto", Next: clock.Now().Add(time.Minute), Agent: true}})
			f.say("carol", "/at 1h later") // arms the schedules, the loaded one too
			f.expect("Scheduled #10")
			clock.Advance(time.Minute)
			f.expect("⏰ Scheduled by the agent (#9")
			if turn := <-f.plugin.Started(); turn.Prompt != "/mode auto" {
				t.Errorf("the scheduled turn ran %q", turn.Prompt)
			}
			f.expectAll("a turn the agent scheduled never runs so", "ran /mode auto asking mode=")
			f.router.Wait()
			if conv, _ := f.router.Conversations().Get(f.key("carol")); conv.Approvals != core.ModeAsk || conv.Mode != "yolo" {
				t.Errorf("the conversation's modes are %q and %q, want ask and yolo as carol set them", conv.Approvals, conv.Mode)
			}
		}},
		{"its turn skips no approval", func(t *testing.T, f *routerFixture, clock *coretest.ManualClock) {
			f.say("carol", "/mode yolo")
			f.expect("From the next turn: yolo")
			f.say("carol", "/mode auto")
			f.expect("no approvals asked")
			f.say("carol", "schedule 1m check the build")
			f.expect("Scheduled #1")
			f.say("carol", "hello")
			f.expect("ran hello unasked mode=yolo")
			clock.Advance(time.Minute)
			f.expect("⏰ Scheduled by the agent")
			f.expectAll("mode auto and yolo, which lets tools run with nobody approving them: a turn the agent scheduled never runs so",
				"ran check the build asking mode=")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := coretest.NewManualClock()
			tools := withAgentTools(t)
			f := newRouterFixtureWith(t, scheduling, clock, func(cfg *core.RouterConfig) {
				tools(cfg)
				cfg.Ask = true
				cfg.Access.Admin("fake", "carol")
			})
			f.plugin.CLIModes = []core.Mode{{Name: "yolo", Help: "runs every tool", Bypass: true}}
			for _, who := range []string{"bob", "carol"} {
				f.say(who, "/fake start")
				f.expect("conversation started")
			}
			tc.run(t, f, clock)
		})
	}
}

// expectAll reads the bot's next message, which must contain each of
// substrs.
func (f *routerFixture) expectAll(substrs ...string) {
	f.t.Helper()
	got := f.next()
	for _, s := range substrs {
		if !strings.Contains(got, s) {
			f.t.Fatalf("bot wrote %q, want it to contain %q", got, s)
		}
	}
}

// key is user's conversation in the fixture's channel, as say writes.
func (f *routerFixture) key(user string) core.ConversationKey {
	return core.ConversationKey{Platform: "fake", User: user, Channel: "c"}
}

// looping is a turn whose agent, for a prompt "loop <when>", schedules the
// same prompt again at when (an agent that keeps its conversation going);
// for "many", schedules four turns; for "notify", notifies six times. It
// says what each call answered.
func looping(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	act := turn.Tools.Actions
	var said []string
	say := func(ok string, err error) {
		if err != nil {
			ok = "refused: " + core.UserMessage(err)
		}
		said = append(said, ok)
	}
	switch first, rest, _ := strings.Cut(turn.Prompt, " "); first {
	case "loop":
		say(act.Schedule(ctx, rest, turn.Prompt))
	case "many":
		for range 4 {
			say(act.Schedule(ctx, "1h", "later"))
		}
	case "notify":
		for range 6 {
			say("notified", act.Notify(ctx, "done"))
		}
	}
	emit(core.TextEvent(strings.Join(said, "\n")))
	return core.TurnResult{SessionID: "tok"}, nil
}

// An agent cannot keep its conversation running unattended: its schedule
// fires a minute from now at the soonest, the turns its schedules start
// may schedule again only three deep until a person writes, three of its
// schedules may wait in a conversation, and its notifications are
// rate-limited. Before, each turn scheduled the next in 1s, for ever.
func TestTheAgentCannotKeepItsConversationGoing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, f *routerFixture, clock *coretest.ManualClock)
	}{
		{"a minute at the soonest", func(t *testing.T, f *routerFixture, clock *coretest.ManualClock) {
			f.say("bob", "loop 1s")
			f.expect("refused: a schedule of yours fires 1m0s from now at the soonest")
		}},
		{"three deep", func(t *testing.T, f *routerFixture, clock *coretest.ManualClock) {
			f.say("bob", "loop 1m")
			f.expect("Scheduled #1")
			for i, want := range []string{"Scheduled #2", "Scheduled #3", "refused: schedules of yours started 3 turns in a row"} {
				clock.Advance(time.Minute)
				f.expect("⏰ Scheduled by the agent")
				if got := f.next(); !strings.Contains(got, want) {
					t.Fatalf("scheduled turn %d: bot wrote %q, want %q", i+1, got, want)
				}
			}
			f.router.Wait()
			if n := len(f.router.Conversations().Schedules()); n != 0 {
				t.Errorf("%d schedules left, want none", n)
			}
			f.say("bob", "loop 1m") // a person writes: the agent may go on again
			f.expect("Scheduled #4")
		}},
		{"three waiting", func(t *testing.T, f *routerFixture, clock *coretest.ManualClock) {
			f.say("bob", "many")
			f.expectAll("Scheduled #1", "Scheduled #3", "refused: 3 schedules of yours wait in this conversation already")
		}},
		{"notifications", func(t *testing.T, f *routerFixture, clock *coretest.ManualClock) {
			f.say("bob", "notify")
			f.expectAll("notified\nnotified\nnotified\nnotified\nnotified\nrefused: this conversation was notified as often as an agent may (5/10m0s): notify again in 2m0s")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := coretest.NewManualClock()
			f := newRouterFixtureWith(t, looping, clock, withAgentTools(t))
			f.say("bob", "/fake start")
			f.expect("conversation started")
			tc.run(t, f, clock)
		})
	}
}

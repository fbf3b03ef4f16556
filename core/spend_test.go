package core_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// costly answers each turn with a reported cost and tokens.
func costly(usd float64) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.TextEvent("done"))
		return core.TurnResult{SessionID: "s1", CostUSD: usd, InputTokens: 1500, OutputTokens: 20}, nil
	}
}

func TestCostCountsConversationAndDay(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, costly(0.25), nil, func(cfg *core.RouterConfig) { cfg.Access.Admin("fake", "bob") })
	f.say("alice", "/fake start")
	f.expect("conversation started")
	for range 2 {
		f.turn("go")
	}
	f.say("alice", "/cost")
	got := f.next()
	for _, want := range []string{"This conversation: $0.5000 · 2 turns · 3.0k in / 40 out tokens", "You today (" + core.Day(coretest.Epoch) + ", UTC): $0.5000 · 2 turns"} {
		if !strings.Contains(got, want) {
			t.Errorf("/cost = %q, want %q", got, want)
		}
	}
	f.say("alice", "/cost all")
	f.expect("/cost all is for admins")
	f.say("bob", "/cost all")
	f.expect("fake/alice: $0.5000 · 2 turns")
	// A new conversation starts from nothing; the day keeps counting.
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/cost")
	f.expect("This conversation: nothing yet\nYou today")
}

const dailySpent = "your daily budget is $0.80: new turns start again at 00:00 UTC"

func TestBudgets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		budgets core.Budgets
		user    string
		// maxUSD are the bounds the plugin is given for three turns of
		// $0.40 each; refused marks the turn refused instead.
		maxUSD  []float64
		refused int
		refusal string
	}{
		{"none", core.Budgets{}, "alice", []float64{0, 0, 0}, -1, ""},
		{"turn", core.Budgets{TurnUSD: 0.5}, "alice", []float64{0.5, 0.5, 0.5}, -1, ""},
		{"daily", core.Budgets{UserDailyUSD: 1}, "alice", []float64{1, 0.6, 0.2}, -1, ""},
		{"daily spent", core.Budgets{UserDailyUSD: 0.8}, "alice", []float64{0.8, 0.4}, 2, dailySpent},
		{"both", core.Budgets{TurnUSD: 0.5, UserDailyUSD: 1}, "alice", []float64{0.5, 0.5, 0.2}, -1, ""},
		{"admin exempt", core.Budgets{TurnUSD: 0.5, UserDailyUSD: 0.1, UserDailyTokens: 10}, "bob", []float64{0, 0, 0}, -1, ""},
		{"admins too", core.Budgets{TurnUSD: 0.5, UserDailyUSD: 0.8, Admins: true}, "bob", []float64{0.5, 0.4}, 2, dailySpent},
		// Each turn uses 1,520 tokens.
		{"daily tokens", core.Budgets{UserDailyTokens: 3000}, "alice", []float64{0, 0}, 2,
			"your turns used 3.0k tokens today, your daily budget is 3.0k: new turns start again at 00:00 UTC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRouterFixtureWith(t, costly(0.4), nil, func(cfg *core.RouterConfig) {
				cfg.Access.Admin("fake", "bob")
				cfg.Budgets = tc.budgets
			})
			f.say(tc.user, "/fake start")
			f.expect("conversation started")
			for i := range 3 {
				f.say(tc.user, "go")
				if i == tc.refused {
					f.expect(tc.refusal)
					return
				}
				got := <-f.plugin.Started()
				f.next()
				if got.MaxCostUSD < tc.maxUSD[i]-1e-9 || got.MaxCostUSD > tc.maxUSD[i]+1e-9 {
					t.Errorf("turn %d: bound $%v, want $%v", i+1, got.MaxCostUSD, tc.maxUSD[i])
				}
			}
		})
	}
}

// A user refused for their day's budget is served again once the UTC day
// is over, and the new day's spend starts from nothing.
func TestDailyBudgetsRenewAtUTCMidnight(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, costly(0.4), clock, func(cfg *core.RouterConfig) { cfg.Budgets = core.Budgets{UserDailyUSD: 0.5} })
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.turn("one")
	f.turn("two")
	f.say("alice", "three")
	// Epoch is 03:04 UTC.
	f.expect("you have spent $0.8000 today, your daily budget is $0.50: new turns start again at 00:00 UTC (in 20h56m0s)")
	clock.Advance(20*time.Hour + 55*time.Minute)
	f.say("alice", "still today")
	f.expect("your daily budget is $0.50: new turns start again at 00:00 UTC (in 1m0s)")
	clock.Advance(time.Minute)
	if got := f.turn("tomorrow"); got.MaxCostUSD != 0.5 {
		t.Errorf("the new day's first turn is bounded at $%v, want the whole $0.50", got.MaxCostUSD)
	}
	f.say("alice", "/cost")
	f.expect("You today (2026-01-03, UTC): $0.4000 · 1 turn")
}

// A turn whose CLI reports tokens but no cost, under a dollar budget, says
// once per conversation that the budget does not bound it, and what does.
func TestUnpricedTurnsSayDollarsDoNotBoundThem(t *testing.T) {
	t.Parallel()
	tokensOnly := func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		emit(core.TextEvent("done"))
		return core.TurnResult{SessionID: "s1", InputTokens: 900, OutputTokens: 40}, nil
	}
	for _, tc := range []struct {
		name    string
		run     func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error)
		budgets core.Budgets
		user    string
		want    string // in the first turn's reply; "" for no note
	}{
		{"dollars only", tokensOnly, core.Budgets{TurnUSD: 1}, "alice",
			"reports tokens, not dollars: the dollar budgets (BUDGET_TURN_USD, BUDGET_USER_DAILY_USD) do not bound its turns; set BUDGET_USER_DAILY_TOKENS to bound them."},
		{"and tokens", tokensOnly, core.Budgets{UserDailyUSD: 1, UserDailyTokens: 50_000}, "alice",
			"do not bound its turns; your daily 50.0k tokens (BUDGET_USER_DAILY_TOKENS) do."},
		{"no dollar budget", tokensOnly, core.Budgets{UserDailyTokens: 50_000}, "alice", ""},
		{"an exempt admin", tokensOnly, core.Budgets{TurnUSD: 1}, "bob", ""},
		{"a CLI that reports cost", costly(0.1), core.Budgets{TurnUSD: 1}, "alice", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRouterFixtureWith(t, tc.run, nil, func(cfg *core.RouterConfig) {
				cfg.Access.Admin("fake", "bob")
				cfg.Budgets = tc.budgets
			})
			f.say(tc.user, "/fake start")
			f.expect("conversation started")
			for i := range 2 {
				f.say(tc.user, "go")
				<-f.plugin.Started()
				got := f.next()
				if noted := strings.Contains(got, "not dollars"); noted != (i == 0 && tc.want != "") || (noted && !strings.Contains(got, tc.want)) {
					t.Errorf("turn %d's reply = %q, want a note %q on the first only", i+1, got, tc.want)
				}
			}
		})
	}
}

// A turn stopped at its bound says which budget stopped it.
func TestBudgetNote(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, costly(0.5), nil, func(cfg *core.RouterConfig) { cfg.Budgets = core.Budgets{TurnUSD: 0.5} })
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "go")
	<-f.plugin.Started()
	f.expect("This turn was stopped when it had cost $0.5000, reaching the turn budget (BUDGET_TURN_USD) of $0.5000.")
}

// A turn that ran longer than NotifyAfter notifies its author when it
// ends; a short one, or one they stopped, does not. A question always
// does.
func TestLongTurnsAndQuestionsNotify(t *testing.T) {
	t.Parallel()
	took := func(d time.Duration) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
		return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
			emit(core.TextEvent("done"))
			return core.TurnResult{Duration: d}, nil
		}
	}
	f := newRouterFixtureWith(t, took(2*time.Minute), nil, func(cfg *core.RouterConfig) { cfg.NotifyAfter = time.Minute })
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.turn("long one")
	n := <-f.rec.Notified()
	if n.User != "alice" || n.Why != core.NotifyLongTurn || n.Text != "✅ Fake fake finished your turn after 2m0s." {
		t.Errorf("notification = %+v", n)
	}
	f.plugin.Script = took(30 * time.Second)
	f.turn("short one")
	f.plugin.Script = func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		answered := make(chan core.Answer, 1)
		emit(core.Event{Kind: core.EventQuestion, Question: &core.Question{Tool: "Bash", Summary: "ls", Answer: func(a core.Answer) { answered <- a }}})
		<-answered
		return core.TurnResult{Duration: 3 * time.Minute}, nil
	}
	f.say("alice", "ask me")
	<-f.plugin.Started()
	f.next() // the question
	if n := <-f.rec.Notified(); n.Why != core.NotifyQuestion || !strings.Contains(n.Text, "waiting for your answer: Bash") {
		t.Errorf("notification = %+v, want the question's", n)
	}
	f.say("alice", "/allow")
	for n := range f.rec.Notified() {
		if n.Why == core.NotifyLongTurn {
			break // the short turn had none before this one's
		}
		t.Errorf("unexpected notification %+v", n)
	}
}

// gatedSpend runs each turn until the test says what it cost: a turn
// whose prompt is p waits for a value on costs[p].
func gatedSpend(costs map[string]chan float64) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		select {
		case usd := <-costs[t.Prompt]:
			emit(core.TextEvent("done " + t.Prompt))
			return core.TurnResult{SessionID: "s-" + t.Prompt, CostUSD: usd}, nil
		case <-ctx.Done():
			return core.TurnResult{}, ctx.Err()
		}
	}
}

// A turn's cost bound is settled when it may start, counting what the
// author's other turns spent while it waited and what those running may
// still spend: turns side by side never get more than the day's budget
// between them, and a turn that waited for a slot is never unbounded.
func TestBudgetsHoldAcrossTurnsInFlight(t *testing.T) {
	t.Parallel()
	type step struct {
		send, cost string // a message to send (in its own conversation), or a turn to end
		usd        float64
		want       []string // what the bot writes then, in any order
		starts     string   // the turn that starts then
		maxUSD     float64  // with this bound
	}
	for _, tc := range []struct {
		name    string
		budgets core.Budgets
		perUser int
		steps   []step
	}{
		{"a turn that waited for its slot while the day was spent", core.Budgets{TurnUSD: 0.5, UserDailyUSD: 1}, 1, []step{
			{send: "a", starts: "a", maxUSD: 0.5},
			{send: "b", want: []string{"number 1 in line"}},
			{cost: "a", usd: 1, want: []string{"done a", "you have spent $1.0000 today, your daily budget is $1.00"}},
		}},
		{"turns side by side share what is left", core.Budgets{TurnUSD: 0.5, UserDailyUSD: 1}, 3, []step{
			{send: "a", starts: "a", maxUSD: 0.5},
			{send: "b", starts: "b", maxUSD: 0.5},
			{send: "c", want: []string{"Your turns running now may spend all that is left of your daily budget ($1.00)"}},
			{cost: "a", usd: 0.2, want: []string{"done a"}, starts: "c", maxUSD: 0.3},
			{cost: "b", usd: 0.5, want: []string{"done b"}},
			{cost: "c", usd: 0.3, want: []string{"done c"}},
			{send: "d", want: []string{"you have spent $1.0000 today"}},
		}},
		{"a daily budget alone: one turn at a time", core.Budgets{UserDailyUSD: 1}, 3, []step{
			{send: "a", starts: "a", maxUSD: 1},
			{send: "b", want: []string{"may spend all that is left"}},
			{cost: "a", usd: 0.3, want: []string{"done a"}, starts: "b", maxUSD: 0.7},
			{cost: "b", usd: 0.1, want: []string{"done b"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			costs := map[string]chan float64{}
			for _, p := range []string{"a", "b", "c", "d"} {
				costs[p] = make(chan float64, 1)
			}
			f := newRouterFixtureWith(t, gatedSpend(costs), nil, func(cfg *core.RouterConfig) {
				cfg.Budgets, cfg.MaxUserTurns = tc.budgets, tc.perUser
			})
			in := func(channel, text string) {
				f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: channel}, Text: text})
			}
			for _, ch := range []string{"a", "b", "c", "d"} {
				in(ch, "/fake start")
				f.expect("conversation started")
			}
			for i, s := range tc.steps {
				if s.send != "" {
					in(s.send, s.send)
				} else {
					costs[s.cost] <- s.usd
				}
				var got []string
				var started *core.Turn
				check := func(turn core.Turn) {
					if turn.Prompt != s.starts || started != nil || math.Abs(turn.MaxCostUSD-s.maxUSD) > 1e-9 {
						t.Fatalf("step %d: turn %q started bounded to $%v, want %q bounded to $%v", i, turn.Prompt, turn.MaxCostUSD, s.starts, s.maxUSD)
					}
					started = &turn
				}
				for len(got) < len(s.want) {
					select {
					case w := <-f.rec.Written():
						got = append(got, w.Text)
					case turn := <-f.plugin.Started():
						check(turn)
					}
				}
				for _, want := range s.want {
					if !strings.Contains(strings.Join(got, "\n"), want) {
						t.Errorf("step %d: bot wrote %q, want %q", i, got, want)
					}
				}
				if s.starts != "" && started == nil {
					check(<-f.plugin.Started())
				}
			}
			f.router.Wait()
			select {
			case turn := <-f.plugin.Started():
				t.Errorf("turn %q started bounded to $%v, want it refused", turn.Prompt, turn.MaxCostUSD)
			default:
			}
		})
	}
}

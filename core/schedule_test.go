package core_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Schedules run on the router's clock, as the author's own messages.
func TestSchedulesRunOnTheClock(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, echo, clock, nil)
	f.say("alice", "/at 30m run the tests")
	f.expect("No conversation here yet")
	f.say("alice", "/fake start")
	f.expect("conversation started")
	for _, tc := range []struct{ cmd, want string }{
		{"/at 30m run the tests", "Scheduled #1 (once), next at 2026-01-02 03:34 UTC: run the tests"},
		{"/every 1h check in", "Scheduled #2 (every 1h0m0s), next at 2026-01-02 04:04 UTC: check in"},
		{"/every 0 9 * * 1-5 standup notes", "Scheduled #3 (cron 0 9 * * 1-5), next at 2026-01-02 09:00 UTC: standup notes"},
		{"/at 08:30 breakfast", "Scheduled #4 (once), next at 2026-01-02 08:30 UTC"},
		{"/at 2026-01-01T00:00:00Z too late", "has passed"},
		{"/at soon x", `"soon" is not a time`},
		{"/at 30m", "usage: /at <when> <message>"},
		{"/every 10s x", "too often"},
		{"/every 1 2 3 x", "an interval such as 30m"},
		{"/unschedule 4", "Removed schedule #4."},
		{"/unschedule 3", "Removed schedule #3."},
	} {
		f.say("alice", tc.cmd)
		f.expect(tc.want)
	}
	f.say("bob", "/unschedule 2")
	f.expect("schedule #2 is someone else's")
	f.say("alice", "/schedules")
	f.expect("#1 once, next at 2026-01-02 03:34 UTC, by alice: run the tests\n#2 every 1h0m0s")

	clock.Advance(30 * time.Minute)
	f.expect("⏰ Schedule #1 (once) sends: run the tests")
	if got := <-f.plugin.Started(); got.Prompt != "run the tests" || got.Key.User != "alice" {
		t.Errorf("scheduled turn = %+v", got)
	}
	f.expect("echo: run the tests")
	clock.Advance(30 * time.Minute)
	f.expect("⏰ Schedule #2 (every 1h0m0s) sends: check in")
	<-f.plugin.Started()
	f.expect("echo: check in")
	f.say("alice", "/schedules")
	f.expect("Scheduled here:\n#2 every 1h0m0s, next at 2026-01-02 05:04 UTC")
	f.say("alice", "/unschedule 2")
	f.expect("Removed schedule #2.")
	f.say("alice", "/schedules")
	f.expect("Nothing is scheduled here.")
}

// A cron schedule fires at each time its expression names, read by the
// parser RouterConfig.ParseCron gives; without one, /every takes intervals
// only and says so.
func TestCronSchedulesFire(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock() // Friday 2026-01-02 03:04 UTC
	f := newRouterFixtureWith(t, echo, clock, nil)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/every 0 9 * * 1-5 standup notes")
	f.expect("Scheduled #1 (cron 0 9 * * 1-5), next at 2026-01-02 09:00 UTC: standup notes")
	f.say("alice", "/every 0 25 * * * x")
	f.expect(`"0 25 * * *" is not an interval or a cron expression`)
	clock.Advance(6 * time.Hour)
	f.expect("⏰ Schedule #1 (cron 0 9 * * 1-5) sends: standup notes")
	f.expect("echo: standup notes")
	f.say("alice", "/schedules")
	f.expect("#1 cron 0 9 * * 1-5, next at 2026-01-05 09:00 UTC") // Monday

	g := newRouterFixtureWith(t, echo, coretest.NewManualClock(), func(cfg *core.RouterConfig) { cfg.ParseCron = nil })
	g.say("alice", "/fake start")
	g.expect("conversation started")
	g.say("alice", "/every 0 9 * * 1-5 standup notes")
	g.expect(`"0 9 * * 1-5" is not an interval, and this bot reads no cron expressions`)
	g.say("alice", "/every 1h check in")
	g.expect("Scheduled #1 (every 1h0m0s)")
}

// A schedule that fell due while the bot was down runs once when its
// platform attaches, saying it is late; one whose author is no longer
// allowed is dropped, and nothing of it shown.
func TestLateSchedulesRunOnceAtStart(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	root := t.TempDir()
	roots, err := core.NewRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	p := &plugintest.Scripted{PluginID: "fake", PluginName: "Fake fake", Script: echo}
	reg, err := core.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	key := core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"}
	convs := core.NewState()
	convs.Put(key, core.Conversation{Plugin: "fake", Workdir: roots[0], Started: coretest.Epoch, LastUsed: coretest.Epoch})
	convs.LoadSchedules([]core.Schedule{
		{ID: 7, Key: key, From: "alice", Text: "nightly build", Next: coretest.Epoch.Add(-3 * time.Hour), Every: 24 * time.Hour},
		{ID: 8, Key: core.ConversationKey{Platform: "fake", User: "mallory", Channel: "c"}, From: "mallory", Text: "rm -rf", Next: coretest.Epoch.Add(-time.Hour)},
	})
	access := core.NewAccess()
	access.Allow("fake", "alice")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	router := core.NewRouter(ctx, core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock}, convs)
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	router.Attach(rec)
	clock.Advance(0) // the timer Attach set, at once
	var got []string
	for range 2 {
		got = append(got, (<-rec.Written()).Text)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"⏰ Schedule #7 (every 24h0m0s) sends: nightly build\nIt is late: it was due at 2026-01-02 00:04 UTC",
		"echo: nightly build"} {
		if !strings.Contains(all, want) {
			t.Errorf("the bot wrote %q, want %q", all, want)
		}
	}
	if turn := <-p.Started(); turn.Prompt != "nightly build" {
		t.Errorf("turn = %q", turn.Prompt)
	}
	scheds := convs.Schedules()
	if len(scheds) != 1 || !scheds[0].Next.Equal(coretest.Epoch.Add(21*time.Hour)) || strings.Contains(strings.Join(rec.Messages(), "\n"), "rm -rf") {
		t.Errorf("schedules after the late run = %+v, want #7 next at its next time, #8 gone", scheds)
	}
	router.Wait()
	select {
	case turn := <-p.Started():
		t.Errorf("mallory's schedule ran a turn: %+v", turn)
	default:
	}
}

// A user admitted by a platform's own rule (Message.Allowed) may chat,
// but not schedule where the platform cannot check the rule again when a
// schedule fires while they are away (it is no core.Readmitter; Discord,
// which is, has its own test): losing the rule must stop their turns.
func TestSchedulesNeedTheAllowList(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, echo, clock, nil)
	carol := func(text string) {
		f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "carol", Channel: "c"}, Text: text, Allowed: true})
	}
	carol("/fake start")
	f.expect("conversation started")
	carol("/every 1h check in")
	f.expect("you are admitted by a rule of fake (such as a role) that cannot be checked again")
	carol("/at 30m once")
	f.expect("/at and /every need your id, carol, on the bot's allow-list")
	carol("/schedules")
	f.expect("Nothing is scheduled here.")
	carol("hello")
	f.expect("echo: hello")
}

// Ending a conversation removes its schedules and says so: they were set
// for it, not for whatever starts in its place next. Starting a new
// conversation in its place does the same.
func TestEndingAConversationRemovesItsSchedules(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, echo, clock, nil)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/every 1h check in")
	f.expect("Scheduled #1")
	f.say("alice", "/at 30m once")
	f.expect("Scheduled #2")
	f.say("bob", "/fake start")
	f.expect("conversation started")
	f.say("bob", "/every 1h bob's")
	f.expect("Scheduled #3")
	f.say("alice", "/conversation end")
	f.expect("Conversation ended. Its history stays with the CLI: /resume brings it back.\nIts 2 schedules are removed.")
	f.say("alice", "/fake start")
	f.expect("fake conversation started")
	clock.Advance(time.Hour)
	// Bob's schedule is his conversation's and still runs; alice's would
	// have written before it.
	f.expect("⏰ Schedule #3 (every 1h0m0s) sends: bob's")
	f.expect("echo: bob's")
	f.say("alice", "/schedules")
	f.expect("Nothing is scheduled here.")

	f.say("alice", "/at 30m again")
	f.expect("Scheduled #4")
	f.say("alice", "/fake start")
	f.expect("fake conversation started in " + f.root + ". Just type to chat.\nThe fake conversation that was here has ended (/fake resume brings it back).\nIts schedule is removed.")
	f.say("alice", "/schedules")
	f.expect("Nothing is scheduled here.")
}

// A scheduled turn is its author's, under the same limits as a typed one:
// it waits in line behind their running turn (MAX_USER_TURNS), and it is
// refused once they have spent their day's budget.
func TestScheduledTurnsObeyLimitsAndBudgets(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	release := make(chan struct{})
	run := func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		if turn.Prompt == "hold" {
			select {
			case <-release:
			case <-ctx.Done():
				return core.TurnResult{}, ctx.Err()
			}
		}
		emit(core.TextEvent("done " + turn.Prompt))
		return core.TurnResult{SessionID: "s1", CostUSD: 0.4}, nil
	}
	f := newRouterFixtureWith(t, run, clock, func(cfg *core.RouterConfig) {
		cfg.MaxUserTurns = 1
		cfg.Budgets = core.Budgets{UserDailyUSD: 1}
	})
	in := func(channel, text string) {
		f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: channel}, Text: text})
	}
	for _, c := range []string{"c", "d"} {
		in(c, "/fake start")
		f.expect("conversation started")
	}
	in("c", "/every 1h scheduled")
	f.expect("Scheduled #1")
	in("d", "hold")
	if got := (<-f.plugin.Started()).Prompt; got != "hold" {
		t.Fatalf("turn %q started, want hold", got)
	}
	clock.Advance(time.Hour)
	f.expect("⏰ Schedule #1 (every 1h0m0s) sends: scheduled")
	f.expect("this one is number 1 in line")
	close(release)
	if got := (<-f.plugin.Started()).Prompt; got != "scheduled" {
		t.Fatalf("turn %q started, want the scheduled one", got)
	}
	// The held turn's reply and the scheduled one's, in either order.
	if got := f.next() + "\n" + f.next(); !strings.Contains(got, "done hold") || !strings.Contains(got, "done scheduled") {
		t.Fatalf("the bot wrote %q, want both turns' replies", got)
	}

	// $0.80 spent: the next one runs, bounded by what is left; then the
	// day's budget is spent, and the one after is refused. (A firing
	// while the one before is still handled would be skipped.)
	f.router.Wait()
	clock.Advance(time.Hour)
	f.expect("⏰ Schedule #1")
	if got := <-f.plugin.Started(); got.MaxCostUSD < 0.2-1e-9 || got.MaxCostUSD > 0.2+1e-9 {
		t.Errorf("the scheduled turn is bounded at $%v, want what is left, $0.20", got.MaxCostUSD)
	}
	f.expect("done scheduled")
	f.router.Wait()
	clock.Advance(time.Hour)
	f.expect("⏰ Schedule #1")
	f.expect("you have spent $1.2000 today, your daily budget is $1.00")
	f.router.Wait()
	select {
	case turn := <-f.plugin.Started():
		t.Errorf("a scheduled turn over the budget ran: %+v", turn)
	default:
	}
}

// /at takes a duration and a future RFC 3339 time, in any zone.
func TestAtTakesDurationsAndTimes(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, echo, clock, nil)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	for _, tc := range []struct{ cmd, want string }{
		{"/at 2h deploy", "Scheduled #1 (once), next at 2026-01-02 05:04 UTC: deploy"},
		{"/at 2026-03-01T09:30:00Z release", "Scheduled #2 (once), next at 2026-03-01 09:30 UTC: release"},
		{"/at 2026-01-02T05:00:00+02:00 already", "has passed"},
		{"/at 2026-01-02T12:00:00+02:00 lunch", "Scheduled #3 (once), next at 2026-01-02 12:00 +0200: lunch"},
		{"/at 2027-06-01T00:00:00Z far", "more than a year ahead"},
	} {
		f.say("alice", tc.cmd)
		f.expect(tc.want)
	}
	clock.Advance(2 * time.Hour)
	f.expect("⏰ Schedule #1 (once) sends: deploy")
	f.expect("echo: deploy")
	clock.Advance(5 * time.Hour) // 10:04 UTC is 12:04 at +02:00
	f.expect("⏰ Schedule #3 (once) sends: lunch")
	f.expect("echo: lunch")
	f.say("alice", "/schedules")
	f.expect("Scheduled here:\n#2 once, next at 2026-03-01 09:30 UTC, by alice: release")
}

// A repeating schedule whose previous message still runs is skipped, and
// the chat hears it once; it fires again once that message is done
// (issue 30).
func TestABusyRepeatingScheduleIsSkippedOnce(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	clock := coretest.NewManualClock()
	f := newRouterFixtureWith(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		<-release
		emit(core.TextEvent("echo: " + turn.Prompt))
		return core.TurnResult{SessionID: "s1"}, nil
	}, clock, nil)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/every 1m check")
	f.expect("Scheduled #1")
	clock.Advance(time.Minute)
	f.expect("⏰ Schedule #1 (every 1m0s) sends: check")
	<-f.plugin.Started()
	for range 2 {
		clock.Advance(time.Minute)
	}
	f.expect("⏰ Schedule #1 (every 1m0s) was skipped: its previous message still runs")
	release <- struct{}{}
	f.expect("echo: check")
	f.router.Wait()
	clock.Advance(time.Minute)
	f.expect("⏰ Schedule #1 (every 1m0s) sends: check")
	<-f.plugin.Started()
	release <- struct{}{}
	f.expect("echo: check")
	if n := len(f.plugin.Turns()); n != 2 {
		t.Errorf("%d turns ran, want 2", n)
	}
}

// A due schedule is sent only once its next time is stored
// (RouterConfig.StoreSchedules), so that a gateway taking over from this
// one does not send it again; one whose time could not be stored is not
// sent, and is tried again 30 s later.
func TestAScheduleIsSentOnceItsNextTimeIsStored(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	var f *routerFixture
	var fail atomic.Bool
	fail.Store(true)
	stored := make(chan []core.Schedule, 4)
	f = newRouterFixtureWith(t, echo, clock, func(cfg *core.RouterConfig) {
		cfg.StoreSchedules = func() error {
			stored <- f.router.Conversations().Schedules()
			if fail.Load() {
				return errors.New("nats: timeout")
			}
			return nil
		}
	})
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/at 30m run the tests")
	f.expect("Scheduled #1 (once)")
	clock.Advance(30 * time.Minute)
	select {
	case got := <-stored:
		if len(got) != 0 {
			t.Errorf("stored %+v, want the schedule gone: it ran once", got)
		}
	default:
		t.Fatal("the due schedule was not stored before it was sent")
	}
	f.say("alice", "/schedules") // answered before any note of the schedule's
	f.expect("#1 once, next at 2026-01-02 03:34 UTC")

	fail.Store(false)
	clock.Advance(30 * time.Second)
	<-stored
	f.expect("⏰ Schedule #1 (once) sends: run the tests")
	if got := <-f.plugin.Started(); got.Prompt != "run the tests" {
		t.Errorf("scheduled turn = %+v", got)
	}
	f.expect("echo: run the tests")
	f.say("alice", "/schedules")
	f.expect("Nothing is scheduled here.")
}

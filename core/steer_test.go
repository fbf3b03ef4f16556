package core_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// steerable is a plugin's turn that takes messages into it until the
// test sends on end: it answers with what it was given. It sends on
// opened once its inbox is open: a turn has started (Started) before.
func steerable(end, opened chan struct{}) func(context.Context, core.Turn, func(core.Event)) (core.TurnResult, error) {
	return func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		steered := make(chan core.Steering, 8)
		if t.Prompt != "closed" {
			t.Inbox.Open(func(s core.Steering) error { steered <- s; return nil })
			opened <- struct{}{}
		}
		got := []string{t.Prompt}
		for {
			select {
			case s := <-steered:
				got = append(got, s.Prompt)
			case <-end:
				t.Inbox.Close()
				for len(steered) > 0 {
					got = append(got, (<-steered).Prompt)
				}
				emit(core.TextEvent("took " + strings.Join(got, " + ")))
				return core.TurnResult{SessionID: "tok"}, nil
			case <-ctx.Done():
				return core.TurnResult{}, ctx.Err()
			}
		}
	}
}

// A message written while a turn runs goes into the turn (BUSY=steer),
// or waits with Steer and Send now (BUSY=queue); /steer and /queue say
// which whatever BUSY is; a turn that cannot take one has it wait, and
// nothing is lost either way.
func TestBusyMessagesSteerOrWait(t *testing.T) {
	t.Parallel()
	steerID := regexp.MustCompile(`/steer ([0-9a-f]{16}) adds it`)
	for _, tc := range []struct {
		name, busy string
		run        func(t *testing.T, f *routerFixture, say func(from, text string), end, opened chan struct{})
	}{
		{"steer by default", "", func(t *testing.T, f *routerFixture, say func(from, text string), end, opened chan struct{}) {
			say("alice", "one")
			<-f.plugin.Started()
			<-opened
			say("alice", "also this")
			f.expect("↪ Added to the running turn")
			say("bob", "and this")
			f.expect("↪ Added to the running turn")
			end <- struct{}{}
			f.expect("took one + also this + and this")
		}},
		{"/queue waits", "", func(t *testing.T, f *routerFixture, say func(from, text string), end, opened chan struct{}) {
			say("alice", "one")
			<-f.plugin.Started()
			say("alice", "/queue later")
			f.expect("Queued (1 waiting)")
			end <- struct{}{}
			f.expect("took one")
			if turn := <-f.plugin.Started(); turn.Prompt != "later" {
				t.Errorf("the queued message ran as %q", turn.Prompt)
			}
			end <- struct{}{}
			f.expect("took later")
		}},
		{"a turn that cannot take it", "", func(t *testing.T, f *routerFixture, say func(from, text string), end, opened chan struct{}) {
			say("alice", "closed")
			<-f.plugin.Started()
			say("alice", "/steer more")
			if got := f.next(); !strings.Contains(got, "Queued (1 waiting)") || strings.Contains(got, "/steer") {
				t.Errorf("bot wrote %q, want it queued with no Steer", got)
			}
			end <- struct{}{}
			f.expect("took closed")
			if turn := <-f.plugin.Started(); turn.Prompt != "more" {
				t.Errorf("the waiting message ran as %q", turn.Prompt)
			}
			end <- struct{}{}
			f.expect("took more")
		}},
		{"queue, then Steer pressed", core.BusyQueue, func(t *testing.T, f *routerFixture, say func(from, text string), end, opened chan struct{}) {
			say("alice", "one")
			<-f.plugin.Started()
			<-opened
			say("alice", "two")
			queued := f.next()
			id := steerID.FindStringSubmatch(queued)
			if id == nil || !strings.Contains(queued, "Queued (1 waiting)") {
				t.Fatalf("queued reply %q offers no Steer", queued)
			}
			say("carol", "/steer "+id[1])
			f.expect("only its author (alice) or an admin can add that message to the running turn")
			say("alice", "/steer "+id[1])
			f.expect("↪ Added to the running turn")
			say("alice", "/steer "+id[1])
			f.expect("that message is no longer waiting")
			say("alice", "/steer three")
			f.expect("↪ Added to the running turn")
			end <- struct{}{}
			f.expect("took one + two + three")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			end, opened := make(chan struct{}), make(chan struct{}, 8)
			f := newRouterFixtureWith(t, steerable(end, opened), nil, func(cfg *core.RouterConfig) {
				cfg.Busy = tc.busy
				cfg.Access.Allow("fake", "carol")
			})
			shared := core.ConversationKey{Platform: "fake", Channel: "c", Thread: "t"}
			say := func(from, text string) {
				f.handle(context.Background(), core.Message{Key: shared, From: from, Text: text})
			}
			say("alice", "/fake start")
			f.expect("conversation started")
			tc.run(t, f, say, end, opened)
			f.router.Wait()
			select {
			case turn := <-f.plugin.Started():
				t.Errorf("turn %q ran, unexpected", turn.Prompt)
			default:
			}
		})
	}
}

// A message with files that a running turn could not take after all (its
// inbox open, the turn ending) waits with its files as they were saved:
// its own turn saves nothing again and still has its images.
func TestFilesOfAMessageTheTurnCouldNotTake(t *testing.T) {
	t.Parallel()
	end := make(chan struct{})
	f := newRouterFixture(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		turn.Inbox.Open(func(core.Steering) error { return core.ErrNotTaken })
		if turn.Prompt == "one" {
			<-end
		}
		emit(core.TextEvent("took " + turn.Prompt))
		return core.TurnResult{SessionID: "tok"}, nil
	})
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "one")
	<-f.plugin.Started()
	f.send("look", file("shot.png", core.FileImage, "PNG", 3))
	f.expect("Queued (1 waiting)")
	close(end)
	f.expect("took one")
	turn := <-f.plugin.Started()
	f.next()
	uploads := filepath.Join(f.root, ".jakebot", "uploads", core.Day(coretest.Epoch))
	if !strings.Contains(turn.Prompt, "- .jakebot/uploads/"+core.Day(coretest.Epoch)+"/shot.png (image)") ||
		len(turn.Images) != 1 || turn.Images[0] != filepath.Join(uploads, "shot.png") {
		t.Errorf("the waiting message's turn: prompt %q, images %q; want shot.png as saved", turn.Prompt, turn.Images)
	}
	if saved, _ := os.ReadDir(uploads); len(saved) != 1 {
		t.Errorf("uploads hold %v, want the file saved once", saved)
	}
}

// An inbox's watcher hears each time it opens and once when it closes
// after that: a runner passes those on to its gateway. An inbox never
// opened closes silently, and a closed one does not open again.
func TestInboxWatch(t *testing.T) {
	t.Parallel()
	take := func(core.Steering) error { return nil }
	for _, tc := range []struct {
		name string
		do   func(b *core.Inbox)
		want string
	}{
		{"opened, then closed", func(b *core.Inbox) { b.Open(take); b.Close(); b.Close() }, "open closed"},
		{"never opened", func(b *core.Inbox) { b.Close() }, ""},
		{"opened after closing", func(b *core.Inbox) { b.Close(); b.Open(take) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var heard []string
			b := &core.Inbox{}
			b.Watch(func(taking bool) { heard = append(heard, map[bool]string{true: "open", false: "closed"}[taking]) })
			tc.do(b)
			if got := strings.Join(heard, " "); got != tc.want {
				t.Errorf("heard %q, want %q", got, tc.want)
			}
		})
	}
}

// A message steers a running turn only if its author is the turn's, or
// would get exactly the same turn; otherwise it waits, and the chat says
// why: for BUSY=steer, /steer and the Steer button alike. Before, a
// non-admin's message ran inside an admin's yolo turn (outside the roots
// he may work in), and one user's inside another's budget.
func TestSteeringNeedsTheSameTurn(t *testing.T) {
	t.Parallel()
	nowID := regexp.MustCompile(`/now ([0-9a-f]{16}) stops`)
	const notSame = "It was not added to the running turn: the running turn is carol's, and yours would not run the same"
	for _, tc := range []struct {
		name, busy string
		budget     bool
		author     string // of the running turn
		run        func(t *testing.T, f *routerFixture, say func(from, text string))
	}{
		{"bob's message into an admin's yolo turn", "", false, "carol", func(t *testing.T, f *routerFixture, say func(from, text string)) {
			say("bob", "and this")
			if got := f.next(); !strings.Contains(got, "Queued (1 waiting)") || !strings.Contains(got, notSame) || strings.Contains(got, "/steer") {
				t.Fatalf("bob's message: bot wrote %q, want it queued, saying why, with no Steer", got)
			}
			say("carol", "also this")
			f.expect("↪ Added to the running turn")
		}},
		{"/steer", "", false, "carol", func(t *testing.T, f *routerFixture, say func(from, text string)) {
			say("bob", "/steer and this")
			f.expect(notSame)
		}},
		{"the Steer button", core.BusyQueue, false, "carol", func(t *testing.T, f *routerFixture, say func(from, text string)) {
			say("bob", "and this")
			got := f.next()
			id := nowID.FindStringSubmatch(got)
			if id == nil || strings.Contains(got, "/steer") {
				t.Fatalf("bob's queued message: bot wrote %q, want no Steer", got)
			}
			say("bob", "/steer "+id[1])
			f.expect("that message waits for the turn to end: the running turn is carol's")
			say("carol", "/steer "+id[1])
			f.expect("that message waits for the turn to end: the running turn is carol's")
		}},
		{"another's daily budget", "", true, "alice", func(t *testing.T, f *routerFixture, say func(from, text string)) {
			say("bob", "and this")
			f.expect("It was not added to the running turn: the running turn is alice's")
			say("alice", "also this")
			f.expect("↪ Added to the running turn")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			end, opened := make(chan struct{}), make(chan struct{}, 8)
			f := newRouterFixtureWith(t, steerable(end, opened), nil, func(cfg *core.RouterConfig) {
				cfg.Busy = tc.busy
				cfg.Access.Admin("fake", "carol")
				if tc.budget {
					cfg.Budgets.UserDailyUSD = 5
				}
			})
			f.plugin.CLIModes = []core.Mode{{Name: "yolo", Help: "runs every tool", Bypass: true}}
			shared := core.ConversationKey{Platform: "fake", Channel: "c", Thread: "t"}
			say := func(from, text string) {
				f.handle(context.Background(), core.Message{Key: shared, From: from, Text: text})
			}
			say(tc.author, "/fake start")
			f.expect("conversation started")
			if tc.author == "carol" {
				say("carol", "/mode yolo")
				f.expect("From the next turn: yolo")
			}
			say(tc.author, "one")
			<-f.plugin.Started()
			<-opened
			tc.run(t, f, say)
			end <- struct{}{}
			if got := f.next(); strings.Contains(got, "and this") {
				t.Fatalf("the running turn %q took bob's message", got)
			}
			turn := <-f.plugin.Started() // bob's, of his own
			if turn.Prompt != "and this" || turn.Mode != "" {
				t.Errorf("bob's turn ran %q in mode %q, want his message in the configured mode", turn.Prompt, turn.Mode)
			}
			<-opened
			end <- struct{}{}
			f.expect("took and this")
			f.router.Wait()
		})
	}
}

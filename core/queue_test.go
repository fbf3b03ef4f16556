package core_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// A waiting message can be sent now: the running turn is interrupted and
// that message runs next, before those queued ahead of it. Only its
// author (or an admin) may.
func TestRouterSendsAQueuedMessageNow(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f := newRouterFixture(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		if turn.Prompt == "one" {
			select {
			case <-ctx.Done():
				return core.TurnResult{}, ctx.Err()
			case <-release:
			}
		}
		emit(core.TextEvent("done " + turn.Prompt))
		return core.TurnResult{SessionID: "tok"}, nil
	})
	t.Cleanup(func() { close(release) })
	shared := core.ConversationKey{Platform: "fake", Channel: "c", Thread: "t"}
	say := func(from, text string) {
		f.handle(context.Background(), core.Message{Key: shared, From: from, Text: text})
	}
	say("alice", "/fake start")
	f.expect("conversation started")
	say("alice", "one")
	if turn := <-f.plugin.Started(); turn.Prompt != "one" {
		t.Fatalf("first turn %q", turn.Prompt)
	}
	say("alice", "two")
	f.expect("Queued (1 waiting)")
	say("alice", "three")
	queued := f.next()
	id := regexp.MustCompile(`/now (\S+) stops the running turn`).FindStringSubmatch(queued)
	if id == nil || !strings.Contains(queued, "Queued (2 waiting)") {
		t.Fatalf("queued reply %q has no /now", queued)
	}
	say("bob", "/now "+id[1])
	f.expect("only its author (alice) or an admin can send that message now")
	say("alice", "/now "+id[1])
	for _, want := range []string{"three", "two"} {
		if turn := <-f.plugin.Started(); turn.Prompt != want {
			t.Fatalf("turn %q ran, want %q", turn.Prompt, want)
		}
	}
	f.router.Wait()
	// The command's answer, the interrupted turn's end and the two turns'
	// replies, in whatever order the conversation and the command wrote.
	var got []string
	for range 4 {
		got = append(got, f.next())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"your message runs next", "Interrupted for the message sent now", "done three", "done two"} {
		if !strings.Contains(all, want) {
			t.Errorf("after /now the bot wrote %q, lacking %q", got, want)
		}
	}
	if strings.Index(all, "done three") > strings.Index(all, "done two") {
		t.Errorf("the message sent now did not run first: %q", got)
	}
	say("alice", "/now "+id[1])
	f.expect("that message is no longer waiting")
}

// Where each user has a conversation of their own in a place (a Discord
// thread, a Telegram topic), a press on a waiting message's Send now
// comes from the presser's conversation: an admin's still sends it now,
// and another user is told whose message it is.
func TestRouterSendsNowFromAnotherConversation(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, func(ctx context.Context, turn core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		if turn.Prompt == "one" {
			<-ctx.Done()
			return core.TurnResult{}, ctx.Err()
		}
		emit(core.TextEvent("done " + turn.Prompt))
		return core.TurnResult{SessionID: "tok"}, nil
	}, nil, func(cfg *core.RouterConfig) { cfg.Access.Admin("fake", "carol") })
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "one")
	if turn := <-f.plugin.Started(); turn.Prompt != "one" {
		t.Fatalf("first turn %q", turn.Prompt)
	}
	f.say("alice", "two")
	id := regexp.MustCompile(`/now (\S+) stops the running turn`).FindStringSubmatch(f.next())
	if id == nil {
		t.Fatal("the queued reply has no /now")
	}
	f.say("bob", "/now "+id[1])
	f.expect("only its author (alice) or an admin can send that message now")
	f.say("carol", "/now "+id[1])
	if turn := <-f.plugin.Started(); turn.Prompt != "two" || turn.Key.User != "alice" {
		t.Fatalf("after the admin's /now turn %q of %q ran, want alice's two", turn.Prompt, turn.Key.User)
	}
	f.router.Wait()
	var got []string
	for range 3 {
		got = append(got, f.next())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"alice's message runs next", "Interrupted for the message sent now", "done two"} {
		if !strings.Contains(all, want) {
			t.Errorf("after the admin's /now the bot wrote %q, lacking %q", got, want)
		}
	}
}

package core_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// newModalFixture is a router whose plugin has modes; bob is an admin.
func newModalFixture(t *testing.T, allowBypass bool) *routerFixture {
	t.Helper()
	return newModalFixtureAsking(t, allowBypass, false)
}

// newModalFixtureAsking is newModalFixture with the chat approving tool
// calls by default (APPROVALS=ask) when ask is set.
func newModalFixtureAsking(t *testing.T, allowBypass, ask bool) *routerFixture {
	t.Helper()
	p := &plugintest.Scripted{PluginID: "fake", PluginName: "Fake fake", Script: echo, CLIModes: []core.Mode{
		{Name: "plan", Help: "plans only"},
		{Name: "yolo", Help: "runs everything", Bypass: true},
	}}
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		reg, err := core.NewRegistry(p)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Plugins = reg
		cfg.Access.Admin("fake", "bob")
		cfg.AllowBypassModes, cfg.Ask = allowBypass, ask
	})
	f.plugin = p
	return f
}

// turn sends text as alice's message and returns the turn the plugin got.
func (f *routerFixture) turn(text string) core.Turn {
	f.t.Helper()
	f.say("alice", text)
	got := <-f.plugin.Started()
	f.next() // the reply
	return got
}

func TestModelAppliesFromTheNextTurn(t *testing.T) {
	t.Parallel()
	f := newModalFixture(t, false)
	f.say("alice", "/model opus")
	f.expect("No conversation here yet")
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/model")
	f.expect("Model: the plugin's default")
	if got := f.turn("hi").Model; got != "" {
		t.Errorf("turn's model = %q before /model, want none", got)
	}
	f.say("alice", "/model opus-4.1")
	f.expect("Model: opus-4.1, from the next turn")
	if got := f.turn("hi").Model; got != "opus-4.1" {
		t.Errorf("turn's model = %q, want opus-4.1", got)
	}
	f.say("alice", "/status")
	f.expect("Model: opus-4.1")
	for _, bad := range []string{"--dangerously-skip-permissions", "-m"} {
		f.say("alice", "/model "+bad)
		f.expect("is not a model name")
	}
	f.say("alice", "/model default")
	f.expect("the plugin's default, from the next turn")
	if got := f.turn("hi").Model; got != "" {
		t.Errorf("turn's model = %q after /model default, want none", got)
	}
}

// turnBy sends text as who's message in alice's conversation, as in a
// shared thread, and returns the turn the plugin got and the reply.
func (f *routerFixture) turnBy(who, text string) (core.Turn, string) {
	f.t.Helper()
	f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"}, From: who, Text: text})
	got := <-f.plugin.Started()
	return got, f.next()
}

func TestModeSwitchesTheCLIModeAndApprovals(t *testing.T) {
	t.Parallel()
	f := newModalFixture(t, false)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/mode")
	listing := f.next()
	for _, want := range []string{"Now: the plugin's default, no approvals asked", "ask — ", "auto — ", "default — ",
		"plan — plans only", "yolo — runs everything (admins only)"} {
		if !strings.Contains(listing, want) {
			t.Errorf("/mode = %q, want it to contain %q", listing, want)
		}
	}
	for _, tc := range []struct {
		who, mode string
		want      string
		// Mode and Ask of the next turns of alice and of bob, an admin:
		// a bypass mode applies only to an admin's turns.
		alice, bob core.Turn
	}{
		{"alice", "plan", "From the next turn: plan, no approvals asked", core.Turn{Mode: "plan"}, core.Turn{Mode: "plan"}},
		{"alice", "ask", "From the next turn: plan, approvals asked in the chat", core.Turn{Mode: "plan", Ask: true}, core.Turn{Mode: "plan", Ask: true}},
		{"alice", "yolo", "only admins may choose it", core.Turn{Mode: "plan", Ask: true}, core.Turn{Mode: "plan", Ask: true}},
		{"alice", "nonsense", `has no mode "nonsense"`, core.Turn{Mode: "plan", Ask: true}, core.Turn{Mode: "plan", Ask: true}},
		{"bob", "YOLO", "From the next turn: yolo, approvals asked in the chat. It applies to admins' turns only", core.Turn{Ask: true}, core.Turn{Mode: "yolo", Ask: true}},
		{"alice", "auto", "From the next turn: yolo, no approvals asked", core.Turn{}, core.Turn{Mode: "yolo"}},
		{"alice", "default", "From the next turn: the plugin's default, no approvals asked", core.Turn{}, core.Turn{}},
	} {
		f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"},
			From: tc.who, Text: "/mode " + tc.mode})
		f.expect(tc.want)
		for who, want := range map[string]core.Turn{"alice": tc.alice, "bob": tc.bob} {
			got, _ := f.turnBy(who, "go")
			if got.Mode != want.Mode || got.Ask != want.Ask {
				t.Errorf("after /mode %s by %s: %s's turn mode %q ask %v, want %q %v", tc.mode, tc.who, who, got.Mode, got.Ask, want.Mode, want.Ask)
			}
		}
	}
}

// An admin's bypass mode stays on a shared conversation, but the turns of
// its other users run as configured: told once, not at every turn.
func TestBypassModeAppliesOnlyToItsAuthorsTurns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, mode string
		ask        bool // APPROVALS=ask
		want       core.Turn
		note       string
	}{
		{"a CLI mode", "yolo", false, core.Turn{}, "set to mode yolo, which lets tools run with nobody approving them: only admins may use it, so your turns here run the plugin's default, no approvals asked."},
		{"auto where the chat approves", "auto", true, core.Turn{Ask: true}, "set to mode auto, which lets tools run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newModalFixtureAsking(t, false, tc.ask)
			f.say("alice", "/fake start")
			f.expect("conversation started")
			f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"},
				From: "bob", Text: "/mode " + tc.mode})
			f.expect("It applies to admins' turns only")
			for i, told := range []bool{true, false} {
				got, reply := f.turnBy("alice", "go")
				if got.Mode != tc.want.Mode || got.Ask != tc.want.Ask {
					t.Errorf("turn %d: alice's turn mode %q ask %v, want %q %v", i, got.Mode, got.Ask, tc.want.Mode, tc.want.Ask)
				}
				if strings.Contains(reply, tc.note) != told {
					t.Errorf("turn %d: reply %q, want the note %q: %v", i, reply, tc.note, told)
				}
			}
			if got, reply := f.turnBy("bob", "go"); got.Mode == tc.want.Mode && got.Ask == tc.want.Ask || strings.Contains(reply, "only admins") {
				t.Errorf("bob's turn: mode %q ask %v, reply %q: want the admin's mode, unremarked", got.Mode, got.Ask, reply)
			}
		})
	}
}

func TestAllowBypassModesLetsEveryoneChooseThem(t *testing.T) {
	t.Parallel()
	f := newModalFixture(t, true)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/mode")
	f.expect("yolo — runs everything (no approvals at all)")
	f.say("alice", "/mode yolo")
	f.expect("From the next turn: yolo")
	if got := f.turn("go").Mode; got != "yolo" {
		t.Errorf("turn mode = %q, want yolo", got)
	}
}

// Where the chat approves tool calls (APPROVALS=ask), /mode auto would
// let the CLI run tools with nobody approving them: it is for admins,
// unless ALLOW_BYPASS_MODES. Where the bot asks nothing anyway, anyone may
// choose it (TestModeSwitchesTheCLIModeAndApprovals).
func TestModeAutoBypassesTheChatsApprovals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		allowBypass bool
		who, want   string
		ask         bool // the next turn's
	}{
		{"a user", false, "alice", "mode auto asks nothing in the chat", true},
		{"an admin", false, "bob", "no approvals asked", false},
		{"a user with ALLOW_BYPASS_MODES", true, "alice", "no approvals asked", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newModalFixtureAsking(t, tc.allowBypass, true)
			f.say("alice", "/fake start")
			f.expect("conversation started")
			f.say("alice", "/mode")
			if listing := f.next(); !strings.Contains(listing, "Now: the plugin's default, approvals asked in the chat") ||
				strings.Contains(listing, "auto — no questions: the CLI's permission mode decides alone (admins only)") == tc.allowBypass {
				t.Errorf("/mode = %q", listing)
			}
			f.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"},
				From: tc.who, Text: "/mode auto"})
			f.expect(tc.want)
			if got, _ := f.turnBy(tc.who, "go"); got.Ask != tc.ask {
				t.Errorf("%s's next turn asks: %v, want %v", tc.who, got.Ask, tc.ask)
			}
		})
	}
}

// A message starting with // is the CLI's own command, one slash removed.
func TestDoubleSlashReachesTheCLI(t *testing.T) {
	t.Parallel()
	f := newRouterFixture(t, echo)
	f.say("alice", "/fake start")
	f.expect("conversation started")
	for text, want := range map[string]string{"//compact": "/compact", "  //review src/main.go": "/review src/main.go", "a // b": "a // b"} {
		f.say("alice", text)
		if got := (<-f.plugin.Started()).Prompt; got != want {
			t.Errorf("%q reached the CLI as %q, want %q", text, got, want)
		}
		f.next()
	}
	f.say("alice", "/help")
	f.expectHelp("//compact runs the CLI's own /compact")
}

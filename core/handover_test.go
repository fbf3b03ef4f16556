package core_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// handing is a plugin whose CLI continues a session in a terminal.
type handing struct{ *plugintest.Scripted }

func (handing) ResumeCommand(session string) string { return "fake --resume " + session }

// /status and the end of a conversation give the command that continues
// its session in a terminal; /resume latest continues the newest session
// in the workdir.
func TestHandOverToTheTerminal(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	p := &plugintest.Scripted{PluginID: "fake", PluginName: "Fake fake", Script: echo, List: plugintest.History([]core.ConversationInfo{
		{SessionID: "0b0b0b0b-newest", Title: "the newest", Updated: now},
		{SessionID: "0a0a0a0a-older", Title: "an older one", Updated: now.Add(-time.Hour)},
	})}
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		reg, err := core.NewRegistry(handing{p})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Plugins = reg
		cfg.Access.Admin("fake", "alice")
	})
	f.plugin = p
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/status")
	if got := f.next(); !strings.Contains(got, "Session: new") || strings.Contains(got, "In a terminal") {
		t.Errorf("/status before a session = %q, want no terminal line", got)
	}
	f.turn("hi")
	f.say("alice", "/status")
	f.expect("In a terminal: cd " + f.root + " && fake --resume tok-hi")
	f.say("alice", "/conversation end")
	f.expect("Conversation ended. Its history stays with the CLI: /resume brings it back, and in a terminal: cd " + f.root + " && fake --resume tok-hi.")
	f.say("alice", "/resume latest")
	f.expect("Resumed Fake fake conversation 0b0b0b0b-newest (the newest)")
}

// The terminal line is pasted into a shell: a session id a CLI (or a
// runner) reported that is not of an id's form gives no line, and one
// that is is quoted. Before, "tok-$(touch pwned)" was printed as it was.
func TestTheTerminalLineHoldsNoShellSyntax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ prompt, want string }{
		{"hi", "In a terminal: cd %s && fake --resume tok-hi"},
		{"$(touch pwned)", ""},
		{"x;reboot", ""},
		{"a b", ""},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			t.Parallel()
			p := &plugintest.Scripted{PluginID: "fake", PluginName: "Fake fake", Script: echo}
			f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
				reg, err := core.NewRegistry(handing{p})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Plugins = reg
			})
			f.plugin = p
			f.say("alice", "/fake start")
			f.expect("conversation started")
			f.turn(tc.prompt)
			f.say("alice", "/status")
			got := f.next()
			if tc.want == "" && strings.Contains(got, "In a terminal") || tc.want != "" && !strings.Contains(got, fmt.Sprintf(tc.want, f.root)) {
				t.Errorf("/status after session tok-%s = %q, want %q", tc.prompt, got, tc.want)
			}
		})
	}
}

// /status says what the CLIs of this machine run behind (SANDBOX).
func TestStatusSaysTheSandbox(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		cfg.Sandbox = "bwrap: each CLI sees only its workdir"
	})
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/status")
	if got := f.next(); !strings.Contains(got, "\nSandbox: bwrap: each CLI sees only its workdir") {
		t.Errorf("/status = %q, want the sandbox", got)
	}
}

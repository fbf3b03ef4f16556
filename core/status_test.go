package core_test

import (
	"strings"
	"testing"
)

// /status says how the conversation's turns run in one phrase per state,
// as a new user reads it: never "Mode: mode the configured mode".
func TestStatusSaysTheModeInOnePhrase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		ask   bool     // APPROVALS=ask
		modes []string // the /mode commands said first
		want  string
	}{
		{"the default", false, nil, "Mode: the plugin's default, no approvals asked"},
		{"the default, asking", true, nil, "Mode: the plugin's default, approvals asked in the chat"},
		{"a CLI mode", false, []string{"plan"}, "Mode: plan, no approvals asked"},
		{"a CLI mode, asking", false, []string{"plan", "ask"}, "Mode: plan, approvals asked in the chat"},
		{"back to the default", true, []string{"plan", "auto", "default"}, "Mode: the plugin's default, approvals asked in the chat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newModalFixtureAsking(t, false, tc.ask)
			f.say("alice", "/fake start")
			f.expect("conversation started")
			for _, md := range tc.modes {
				f.say("alice", "/mode "+md)
				f.next()
			}
			f.say("alice", "/status")
			got := f.next()
			if !strings.Contains(got, tc.want+"\n") {
				t.Errorf("/status = %q, want a line %q", got, tc.want)
			}
		})
	}
}

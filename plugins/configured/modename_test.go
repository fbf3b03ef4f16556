package configured

import "testing"

// An agent's mode named as one of the bot's own is offered under another
// name, which goes back to the agent as its own; every other name is the
// agent's as it is.
func TestModeNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ id, name string }{
		{"default", "agent-default"},
		{"Auto", "agent-Auto"},
		{"ask", "agent-ask"},
		{"yolo", "yolo"},
		{"agent-x", "agent-x"},
	} {
		if got := modeName(tc.id); got != tc.name {
			t.Errorf("modeName(%q) = %q, want %q", tc.id, got, tc.name)
		}
		if got := agentMode(tc.name); got != tc.id {
			t.Errorf("agentMode(%q) = %q, want %q", tc.name, got, tc.id)
		}
	}
}

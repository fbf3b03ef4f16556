package gemini

import (
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// The approval mode `gemini --acp` runs in: where the chat answers, the
// conversation's mode, else none (the agent asks about everything) unless
// the operator chose yolo; where nobody answers (APPROVALS=auto), the
// conversation's mode or the configured one.
func TestACPArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, configured string
		turn             core.Turn
		want             []string
	}{
		{"asks", "auto_edit", core.Turn{Ask: true}, []string{"--acp"}},
		{"asks, mode set", "auto_edit", core.Turn{Ask: true, Mode: "plan"}, []string{"--acp", "--approval-mode", "plan"}},
		{"asks, yolo configured", "yolo", core.Turn{Ask: true}, []string{"--acp", "--approval-mode", "yolo"}},
		{"unasked", "auto_edit", core.Turn{}, []string{"--acp", "--approval-mode", "auto_edit"}},
		{"unasked, mode set", "auto_edit", core.Turn{Mode: "default"}, []string{"--acp", "--approval-mode", "default"}},
	} {
		p := New(Config{ApprovalMode: tc.configured, Settings: cliproc.Settings{Args: []string{"--sandbox"}}}, nil)
		if got := p.acpArgs(tc.turn); !slices.Equal(got, append(tc.want, "--sandbox")) {
			t.Errorf("%s: acpArgs = %q, want %q", tc.name, got, append(tc.want, "--sandbox"))
		}
	}
}

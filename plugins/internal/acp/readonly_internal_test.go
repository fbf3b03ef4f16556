package acp

import (
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// A read-only turn is set to the agent's read-only mode, whatever mode the
// conversation chose, and refuses every permission request, whatever the
// chat would answer; an agent that announces no such mode gets no prompt;
// one that leaves the mode on its own is cancelled.
func TestClientReadOnlyTurn(t *testing.T) {
	t.Parallel()
	const (
		initialized = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`
		setMode     = `{"jsonrpc":"2.0","id":5,"result":{}}`
		asks        = `{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"Plan approved","kind":"switch_mode"},` +
			`"options":[{"optionId":"yes","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}]}}`
		ended = `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`
	)
	session := func(modes ...string) string {
		var list []string
		for _, m := range modes {
			list = append(list, `{"id":"`+m+`","name":"`+m+`"}`)
		}
		return `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"availableModes":[` + strings.Join(list, ",") + `]}}}`
	}
	for _, tc := range []struct {
		name   string
		turn   core.Turn
		lines  []string
		sent   []string
		failed string
	}{
		{"plan", core.Turn{ReadOnly: true, Ask: true, Mode: "yolo"}, []string{initialized, session("default", "yolo", "plan"), setMode, asks, ended},
			[]string{`"method":"initialize"`, `"method":"session/new"`, `"modeId":"plan"`, `"method":"session/prompt"`, `"optionId":"no"`}, ""},
		{"no read-only mode", core.Turn{ReadOnly: true, Ask: true}, []string{initialized, session("default", "yolo")},
			[]string{`"method":"initialize"`, `"method":"session/new"`}, core.ErrNoReadOnly.Error() + " (Agent announced the modes: default, yolo)."},
		{"leaves it", core.Turn{ReadOnly: true}, []string{initialized, session("default", "plan"), setMode,
			update(`{"sessionUpdate":"current_mode_update","currentModeId":"default"}`)},
			[]string{`"method":"initialize"`, `"method":"session/new"`, `"modeId":"plan"`, `"method":"session/prompt"`, `"method":"session/cancel"`},
			"Agent left its read-only mode (for default), so this read-only turn was stopped."},
		{"may write", core.Turn{Ask: true, Mode: "yolo"}, []string{initialized, session("default", "yolo", "plan"), setMode, asks, ended},
			[]string{`"method":"initialize"`, `"method":"session/new"`, `"modeId":"yolo"`, `"method":"session/prompt"`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.turn.Workdir, tc.turn.Prompt = "/w", "review"
			sent, events, _ := run(t, tc.turn, Options{Name: "Agent", Mode: tc.turn.Mode, ReadOnlyMode: "plan"}, tc.lines...)
			if len(sent) != len(tc.sent) {
				t.Fatalf("sent\n%s\nwant %d messages", strings.Join(sent, "\n"), len(tc.sent))
			}
			for i, w := range tc.sent {
				if !strings.Contains(sent[i], w) {
					t.Errorf("sent[%d] = %s, want %s", i, sent[i], w)
				}
			}
			var errs []string
			for _, ev := range events {
				if ev.Kind == core.EventBlock && ev.Block.Kind == core.BlockError {
					errs = append(errs, ev.Block.Text)
				}
			}
			if tc.failed != "" && (len(errs) != 1 || errs[0] != tc.failed) {
				t.Errorf("errors %q, want %q", errs, tc.failed)
			}
		})
	}
}

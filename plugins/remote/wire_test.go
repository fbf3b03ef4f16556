package remote

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// A text delta is most of a turn's events: it travels without the empty
// block beside it, which was 14 fields of nothing to encode and decode for
// every few characters (issue 33: JSON was the runner hop's first cost).
// A block still travels whole.
func TestWireEventsCarryNoEmptyBlock(t *testing.T) {
	tests := []struct {
		name      string
		ev        wireEvent
		wantBlock bool
	}{
		{"a text delta", wireEvent{Kind: core.EventText, Text: "12.34; "}, false},
		{"a session", wireEvent{Kind: core.EventSession, SessionID: "s"}, false},
		{"a tool block", wireEvent{Kind: core.EventBlock, Block: core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash",
			Text: "ls", Status: core.ToolDone}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), `"block"`); got != tt.wantBlock {
				t.Errorf("%s: block sent = %v, want %v", b, got, tt.wantBlock)
			}
			var back wireEvent
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, tt.ev) {
				t.Errorf("%s came back as %+v (%v)", b, back, err)
			}
		})
	}
}

// BenchmarkTurnMessage is one turn message of five text deltas, as the
// runner encodes it and the gateway decodes it.
func BenchmarkTurnMessage(b *testing.B) {
	tm := turnMessage{Seq: 7}
	for range 5 {
		tm.Events = append(tm.Events, wireEvent{Kind: core.EventText, Text: "123.4567890123; "})
	}
	for b.Loop() {
		data, err := json.Marshal(tm)
		if err != nil {
			b.Fatal(err)
		}
		var back turnMessage
		if err := json.Unmarshal(data, &back); err != nil {
			b.Fatal(err)
		}
	}
}

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
		{"a tool block", wireEvent{Kind: core.EventBlock, Block: &core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash",
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

// The outbox encodes each event once, when it comes, and puts a turn
// message together from those encodings: what the gateway decodes must be
// the message itself.
func TestTurnMessagesPutTogetherDecodeWhole(t *testing.T) {
	events := []wireEvent{
		{Kind: core.EventText, Text: "a \"quoted\" <delta>\n"},
		{Kind: core.EventBlock, Block: &core.ResponseBlock{Kind: core.BlockToolUse, Text: "Bash", Detail: "ls"}},
		{Inbox: inboxOpen},
	}
	for _, tt := range []struct {
		name string
		m    turnMessage
	}{
		{"nothing", turnMessage{Turn: "T1", Seq: 1}},
		{"one event", turnMessage{Turn: "T1", Seq: 2, Events: events[:1]}},
		{"events", turnMessage{Turn: "T1", Seq: 3, Events: events}},
		{"the end", turnMessage{Turn: "T1", Seq: 4, Events: events[1:], Done: true, Result: &core.TurnResult{SessionID: "s1", CostUSD: 0.25},
			Error: &wireError{Message: "it broke", User: true}}},
		{"the end alone", turnMessage{Turn: "T1", Seq: 5, Done: true, Result: &core.TurnResult{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			head := tt.m
			head.Events = nil
			var encoded [][]byte
			for i := range tt.m.Events {
				encoded = append(encoded, queued(&tt.m.Events[i]).data)
			}
			data, err := appendTurnMessage(nil, &head, encoded)
			if err != nil {
				t.Fatal(err)
			}
			var got turnMessage
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if !reflect.DeepEqual(got, tt.m) {
				t.Errorf("decoded %+v from %s, want %+v", got, data, tt.m)
			}
		})
	}
}

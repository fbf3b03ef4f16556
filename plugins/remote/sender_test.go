package remote

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// A message of the stream carries the next part of every turn with
// events waiting, as many as fit: within the bound, each turn's parts
// numbered from 1 and its events in order, its end last, and the turns
// left over first in the next message, so none waits behind the others.
func TestAMessageCarriesEveryWaitingTurn(t *testing.T) {
	const max = 2000
	s := &sender{r: &Runner{cfg: RunnerConfig{Name: "box2"}, logger: core.OrDiscard(nil)}, max: max, wake: make(chan struct{}, 1)}
	want := map[string][]string{}
	text := func(turn string, i int) string { return fmt.Sprintf("%s%d %s", turn, i, strings.Repeat("x", 60)) }
	for _, tt := range []struct {
		turn   string
		events int
		end    bool
	}{{"A", 6, false}, {"B", 1, true}, {"C", 9, true}, {"D", 0, true}} {
		o := newOutbox(s, tt.turn)
		for i := range tt.events {
			o.add(wireEvent{Kind: core.EventText, Text: text(tt.turn, i)})
			want[tt.turn] = append(want[tt.turn], text(tt.turn, i))
		}
		if tt.end {
			o.finish(core.TurnResult{SessionID: "s-" + tt.turn}, nil)
			want[tt.turn] = append(want[tt.turn], "end s-"+tt.turn)
		}
	}
	got := map[string][]string{}
	seqs := map[string]int{}
	var order [][]string // the turns of each message
	var ended []string
	for range 20 {
		data, done, _ := s.next()
		for _, o := range done {
			ended = append(ended, o.id)
		}
		if data == nil {
			break
		}
		if len(data) > max {
			t.Errorf("a message of %d bytes, over the bound of %d", len(data), max)
		}
		var b eventBatch
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		var turns []string
		for _, p := range b.Parts {
			turns = append(turns, p.Turn)
			if seqs[p.Turn]++; p.Seq != seqs[p.Turn] {
				t.Errorf("turn %s's part %d came as %d", p.Turn, seqs[p.Turn], p.Seq)
			}
			for _, we := range p.Events {
				got[p.Turn] = append(got[p.Turn], we.Text)
			}
			if p.Done {
				got[p.Turn] = append(got[p.Turn], "end "+p.Result.SessionID)
			}
		}
		if order = append(order, turns); len(order) == 1 {
			// A turn with events since: after those left over.
			e := newOutbox(s, "E")
			e.add(wireEvent{Kind: core.EventText, Text: text("E", 0)})
			want["E"] = []string{text("E", 0)}
		}
	}
	for turn, w := range want {
		if !slices.Equal(got[turn], w) {
			t.Errorf("turn %s got %q, want %q", turn, got[turn], w)
		}
	}
	// Each turn gets a share of the first message; those left over go
	// first in the next.
	if w := [][]string{{"A", "B", "C", "D"}, {"A", "C", "E"}}; !slices.EqualFunc(order, w, slices.Equal) {
		t.Errorf("the messages carried the turns %v, want %v", order, w)
	}
	if slices.Sort(ended); !slices.Equal(ended, []string{"B", "C", "D"}) {
		t.Errorf("the ends sent were %v, want B, C and D", ended)
	}
}

// A turn asked for as the runner stops may come after its sender ended:
// its end waits for nothing, so the turn's goroutine ends too.
func TestATurnAfterTheSenderEndsWaitsForNothing(t *testing.T) {
	s := &sender{r: &Runner{cfg: RunnerConfig{Name: "box2"}, logger: core.OrDiscard(nil)}, max: 2000,
		wake: make(chan struct{}, 1), ended: make(chan struct{})}
	before := newOutbox(s, "A") // queued while the sender ran
	before.add(wireEvent{Kind: core.EventText, Text: "a"})
	s.end()
	after := newOutbox(s, "B")
	after.add(wireEvent{Kind: core.EventText, Text: "b"})
	for _, o := range []*outbox{before, after} {
		o.finish(core.TurnResult{}, nil)
		select {
		case <-o.done:
		default:
			t.Errorf("turn %s's end waits for a sender that has ended", o.id)
		}
	}
}

package remote

import (
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// fit makes any event fit a message, and ends: text in pieces that add
// up to it, shown texts cut short, and what cannot be cut (options, ids)
// replaced by a warning.
func TestFit(t *testing.T) {
	o := &outbox{s: &sender{r: &Runner{cfg: RunnerConfig{Name: "box2"}}}}
	const room = 1 << 10
	many := make([]string, 50)
	for i := range many {
		many[i] = strings.Repeat("o", 40)
	}
	for _, tt := range []struct {
		name string
		we   wireEvent
		want string // in the result's shown text; "" for a text event
	}{
		{"a long text", wireEvent{Kind: core.EventText, Text: strings.Repeat("<é> & ", 2000)}, ""},
		{"a tool's long output", wireEvent{Kind: core.EventBlock, Block: &core.ResponseBlock{Kind: core.BlockToolUse, Tool: "Bash",
			Text: "cat log", Detail: strings.Repeat("line\n", 2000)}}, "bytes cut: too large for one NATS message"},
		{"a question's long detail", wireEvent{Kind: core.EventQuestion, Question: &wireQuestion{ID: "q1", Tool: "Bash",
			Summary: "run it?", Detail: strings.Repeat("x", 5000)}}, "bytes cut"},
		{"a question's many options", wireEvent{Kind: core.EventQuestion, Question: &wireQuestion{ID: "q1", Tool: "Ask",
			Summary: "which?", Options: many}}, "too large to send from runner box2"},
		{"a block's long path", wireEvent{Kind: core.EventBlock, Block: &core.ResponseBlock{Kind: core.BlockDiff,
			Path: strings.Repeat("d/", 700), Text: "+x"}}, "too large to send from runner box2"},
		{"an empty text, somehow too large", wireEvent{Kind: core.EventText, Model: strings.Repeat("m", 2000)}, "too large to send"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := o.fit(tt.we, room)
			var text, shown strings.Builder
			for _, we := range out {
				if n := eventSize(we); n > room {
					t.Errorf("an event of %d bytes, over the room of %d", n, room)
				}
				text.WriteString(we.Text)
				shown.WriteString(we.Text)
				if b := we.Block; b != nil {
					shown.WriteString(b.Text + b.Detail)
				}
				if q := we.Question; q != nil {
					shown.WriteString(q.Summary + q.Detail)
				}
			}
			if tt.want == "" && text.String() != tt.we.Text {
				t.Errorf("the pieces make %d bytes, not the text's %d", text.Len(), len(tt.we.Text))
			}
			if !strings.Contains(shown.String(), tt.want) {
				t.Errorf("fit gave %+v, want it to say %q", out, tt.want)
			}
		})
	}
}

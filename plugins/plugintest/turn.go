package plugintest

import (
	"context"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// TurnOutput is what one Plugin.Run produced.
type TurnOutput struct {
	Events []core.Event
	Result core.TurnResult
	Err    error
}

// RunTurn runs one turn of p, collecting its events, and logs them.
func RunTurn(ctx context.Context, t testing.TB, p core.Plugin, turn core.Turn) TurnOutput {
	t.Helper()
	var out TurnOutput
	out.Result, out.Err = p.Run(ctx, turn, func(ev core.Event) { out.Events = append(out.Events, ev) })
	t.Logf("events:\n%s", FormatEvents(out.Events))
	return out
}

// Text is the answer text, all text events joined.
func (o TurnOutput) Text() string {
	var b strings.Builder
	for _, ev := range o.Events {
		if ev.Kind == core.EventText {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// Blocks returns the blocks of one kind, in order.
func (o TurnOutput) Blocks(kind core.BlockKind) []core.ResponseBlock {
	var out []core.ResponseBlock
	for _, ev := range o.Events {
		if ev.Kind == core.EventBlock && ev.Block.Kind == kind {
			out = append(out, ev.Block)
		}
	}
	return out
}

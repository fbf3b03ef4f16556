package replay

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/configured"
)

// StreamParser turns a plugin's recorded output into the events the plugin
// emits while its CLI runs, with no process. Each plugin gets an adapter.
type StreamParser interface {
	// Parse reads the whole stream, emitting events in order, and returns
	// the turn's result, or nil when the stream carries none.
	Parse(r io.Reader, emit func(core.Event)) (*core.TurnResult, error)
}

// builtins read the built-in plugins' recorded output (bot.BuiltinPlugins),
// one-shot streams and protocol sessions alike, by plugin id. A replay has
// nobody to answer the questions they ask, so these show as status lines.
var builtins = func() map[string]readFunc {
	out := map[string]readFunc{}
	for _, b := range bot.BuiltinPlugins {
		out[b.ID] = func(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
			return b.ReadStream(r, "", askedAsStatus(emit))
		}
	}
	return out
}()

// readFunc is a StreamParser that is a function.
type readFunc func(r io.Reader, emit func(core.Event)) (*core.TurnResult, error)

func (f readFunc) Parse(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	return f(r, emit)
}

// Builtins returns the ids of the built-in plugins that can be replayed.
func Builtins() []string { return slices.Sorted(maps.Keys(builtins)) }

// Parser returns the parser for plugin id: a built-in plugin's, or the
// mapping of a plugin configured in specs.
func Parser(id string, specs []configured.Spec) (StreamParser, error) {
	if f, ok := builtins[id]; ok {
		return f, nil
	}
	for _, s := range specs {
		if s.ID == id {
			return readFunc(configured.New(s, nil).ReadStream), nil
		}
	}
	known := Builtins()
	for _, s := range specs {
		known = append(known, s.ID)
	}
	return nil, fmt.Errorf("no plugin %q to replay (known: %s; configured plugins come from --plugins-file or PLUGINS_FILE)", id, strings.Join(known, ", "))
}

// askedAsStatus shows a recorded question as a status line: a replay has
// nobody to answer it. The agent's own question shows with its options.
func askedAsStatus(emit func(core.Event)) func(core.Event) {
	return func(ev core.Event) {
		if q := ev.Question; ev.Kind == core.EventQuestion && q != nil {
			text := "Asked to allow " + q.Tool + ": " + q.Summary
			if len(q.Options) > 0 {
				text = "Asked: " + q.Summary + " (" + strings.Join(q.Options, " / ") + ")"
			}
			ev = core.BlockEvent(core.ResponseBlock{Kind: core.BlockStatus, Text: text})
		}
		emit(ev)
	}
}

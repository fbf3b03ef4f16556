package codex_test

import (
	"flag"
	"io"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// recordings are the real CLI's output recorded by TestCapture (repository
// testdata/codex), hand-written streams beside this test for item types
// the fake model cannot make Codex produce, and recorded `codex
// app-server` sessions (the server's side).
var recordings = plugintest.Recordings{
	Streams:       []string{"../../testdata/codex/*.jsonl", "testdata/*.jsonl"},
	Sessions:      []string{"../../testdata/codex/appserver/*.jsonl"},
	SessionPrefix: "appserver_",
	Read: func(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
		return codex.ReadStream(r, plugintest.RecordedWorkdir, emit)
	},
}

func TestParseGolden(t *testing.T) { recordings.Goldens(t, *update) }

func FuzzReadStream(f *testing.F) {
	recordings.Fuzz(f, []byte(`{"method":"item/completed","params":{"item":null}}`+"\n"+`{"id":3,"error":{"code":1,"message":"x"}}`))
}

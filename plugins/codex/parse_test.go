package codex_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// streams are the real CLI's output recorded by TestCapture (repository
// testdata/codex), and hand-written streams beside this test for item
// types the fake model cannot make Codex produce.
func streams(t testing.TB) []string {
	return plugintest.Streams(t, "../../testdata/codex/*.jsonl", "testdata/*.jsonl")
}

// sessions are recorded `codex app-server` sessions (the server's side).
func sessions(t testing.TB) []string {
	return plugintest.Streams(t, "../../testdata/codex/appserver/*.jsonl")
}

// read reads a recorded stream or session as Run reads its CLI's output.
func read(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	return codex.ReadStream(r, codex.CaptureWorkdir, emit)
}

func TestParseGolden(t *testing.T) {
	plugintest.Goldens(t, streams(t), "", *update, read)
}

func TestAppServerGolden(t *testing.T) {
	plugintest.Goldens(t, sessions(t), "appserver_", *update, read)
}

func FuzzReadStream(f *testing.F) {
	plugintest.FuzzSeeds(f, append(streams(f), sessions(f)...))
	f.Add([]byte(`{"method":"item/completed","params":{"item":null}}` + "\n" + `{"id":3,"error":{"code":1,"message":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := read(bytes.NewReader(append(data, data...)), func(core.Event) {}); err != nil {
			t.Fatal(err)
		}
	})
}

// The recorded `codex exec --json` turn that adds, changes and deletes a
// file shows its diffs once the thread's recorded rollout is read, as
// Run does at the end of the turn.
func TestPatchedFromRollout(t *testing.T) {
	t.Parallel()
	stream, err := os.ReadFile("../../testdata/codex/patch.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var events []core.Event
	p := codex.NewParser(func(ev core.Event) { events = append(events, ev) })
	p.Workdir = codex.CaptureWorkdir
	for _, line := range bytes.Split(stream, []byte("\n")) {
		p.Line(line)
	}
	p.Patched(codex.RecordedChanges("../../testdata/codex/rollouts/patch.jsonl"))
	plugintest.Golden(t, "testdata/patch_diffs.golden", plugintest.FormatEvents(events), *update)
}

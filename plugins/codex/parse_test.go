package codex_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
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

// parse runs one feed of a stream through ReadStream, as Run does, and
// renders the events and the result.
func parse(t testing.TB, feed plugintest.Feed) string {
	t.Helper()
	var events []core.Event
	p := codex.NewParser(func(ev core.Event) { events = append(events, ev) })
	p.Workdir = codex.CaptureWorkdir
	if err := codex.ReadStream(feed.Reader, p); err != nil {
		t.Fatal(err)
	}
	return plugintest.FormatEvents(events) + plugintest.FormatResult(p.Result()) + "\n"
}

func TestParseGolden(t *testing.T) {
	for _, file := range streams(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			feeds := plugintest.Feeds(data)
			whole := parse(t, feeds[0])
			plugintest.Golden(t, filepath.Join("testdata", name+".golden"), whole, *update)
			// The same events however the bytes arrive.
			for _, f := range feeds[1:] {
				if got := parse(t, f); got != whole {
					t.Errorf("fed %s, events differ from fed whole:\n%s", f.Name, got)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, file := range streams(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		p := codex.NewParser(func(core.Event) {})
		p.Line(line)
		p.Line(line)
		p.Flush()
	})
}

package codex

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// parseAll feeds a stream through the line reader and a Parser, as Run
// does, and returns the events.
func parseAll(r io.Reader, p *Parser) []core.Event {
	var events []core.Event
	emit := func(ev core.Event) { events = append(events, ev) }
	lr := cliproc.NewLineReader(r, cliproc.MaxLine)
	for {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			continue
		}
		p.Line(line, emit)
	}
	p.Flush(emit)
	return events
}

// goldenInputs are the streams recorded from the real CLI (repository
// testdata/codex) and the hand-written ones beside this test, for item
// types the fake model cannot make Codex produce.
func goldenInputs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{
		filepath.Join(plugintest.ModuleRoot(), "testdata", "codex", "*.jsonl"),
		filepath.Join("testdata", "*.jsonl"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no recorded streams")
	}
	return files
}

func TestParseGolden(t *testing.T) {
	for _, in := range goldenInputs(t) {
		name := strings.TrimSuffix(filepath.Base(in), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var want string
			for _, f := range plugintest.Feeds(data) {
				got := plugintest.FormatEvents(parseAll(f.Reader, &Parser{}))
				if want == "" {
					want = got
					plugintest.Golden(t, filepath.Join("testdata", name+".golden"), got, *update)
				} else if got != want {
					t.Errorf("fed %s, the events differ from fed whole:\n%s", f.Name, got)
				}
			}
		})
	}
}

func FuzzParser(f *testing.F) {
	for _, in := range goldenInputs(&testing.T{}) {
		data, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Parser
		for _, line := range strings.Split(string(data), "\n") {
			p.Line([]byte(line), func(core.Event) {})
		}
		p.Flush(func(core.Event) {})
	})
}

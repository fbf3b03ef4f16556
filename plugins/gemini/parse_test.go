package gemini_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// streams are the real CLI's output recorded by TestCapture (repository
// testdata/gemini), and hand-written streams beside this test for events
// the fake model cannot make the CLI produce.
func streams(t testing.TB) []string {
	return plugintest.Streams(t, "../../testdata/gemini/*.jsonl", "testdata/*.jsonl")
}

// parse runs one feed of a stream through ReadStream, as Run does, and
// renders the events and the result.
func parse(t testing.TB, feed plugintest.Feed) string {
	t.Helper()
	var events []core.Event
	p := gemini.NewParser(func(ev core.Event) { events = append(events, ev) })
	if err := gemini.ReadStream(feed.Reader, p); err != nil {
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

func TestToolName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"run_shell_command": "Shell",
		"write_file":        "Write",
		"update_topic":      "Update Topic",
		"mcp-server__ping":  "Mcp Server Ping",
		"":                  "",
	} {
		if got := gemini.ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
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
		p := gemini.NewParser(func(core.Event) {})
		p.Line(line)
		p.Line(line)
	})
}

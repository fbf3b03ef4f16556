package gemini_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// readACP runs one feed of a recorded ACP session and renders its events.
func readACP(t testing.TB, feed plugintest.Feed) string {
	t.Helper()
	var events []core.Event
	res, err := gemini.ReadACP(feed.Reader, func(ev core.Event) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	return plugintest.FormatEvents(events) + plugintest.FormatResult(res) + "\n"
}

// Recorded `gemini --acp` sessions (the CLI's side), replayed whole and in
// pieces.
func TestACPGolden(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/gemini/acp/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no recorded ACP sessions")
	}
	for _, file := range files {
		name := "acp_" + strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			feeds := plugintest.Feeds(data)
			whole := readACP(t, feeds[0])
			plugintest.Golden(t, filepath.Join("testdata", name+".golden"), whole, *update)
			for _, f := range feeds[1:] {
				if got := readACP(t, f); got != whole {
					t.Errorf("fed %s, events differ from fed whole:\n%s", f.Name, got)
				}
			}
		})
	}
}

func FuzzReadACP(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/gemini/acp/*.jsonl")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}` + "\n" + `{"jsonrpc":"2.0","method":"session/update","params":{"update":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := gemini.ReadACP(strings.NewReader(string(data)), func(core.Event) {}); err != nil {
			t.Fatal(err)
		}
	})
}

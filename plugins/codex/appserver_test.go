package codex_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// readAppServer runs one feed of a recorded app-server session through a
// turn's session and renders the events and the result.
func readAppServer(t testing.TB, feed plugintest.Feed) string {
	t.Helper()
	var events []core.Event
	p := codex.NewParser(func(ev core.Event) { events = append(events, ev) })
	p.Workdir = codex.CaptureWorkdir
	if err := codex.ReadAppServer(feed.Reader, p); err != nil {
		t.Fatal(err)
	}
	return plugintest.FormatEvents(events) + plugintest.FormatResult(p.Result()) + "\n"
}

// Recorded `codex app-server` sessions (the server's side), replayed
// whole and in pieces.
func TestAppServerGolden(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/codex/appserver/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no recorded app-server sessions")
	}
	for _, file := range files {
		name := "appserver_" + strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			feeds := plugintest.Feeds(data)
			whole := readAppServer(t, feeds[0])
			plugintest.Golden(t, filepath.Join("testdata", name+".golden"), whole, *update)
			for _, f := range feeds[1:] {
				if got := readAppServer(t, f); got != whole {
					t.Errorf("fed %s, events differ from fed whole:\n%s", f.Name, got)
				}
			}
		})
	}
}

func FuzzReadAppServer(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/codex/appserver/*.jsonl")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"method":"item/completed","params":{"item":null}}` + "\n" + `{"id":3,"error":{"code":1,"message":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := codex.NewParser(func(core.Event) {})
		if err := codex.ReadAppServer(strings.NewReader(string(data)), p); err != nil {
			t.Fatal(err)
		}
	})
}

package gemini_test

import (
	"bytes"
	"flag"
	"io"
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

// sessions are recorded `gemini --acp` sessions (the CLI's side).
func sessions(t testing.TB) []string {
	return plugintest.Streams(t, "../../testdata/gemini/acp/*.jsonl")
}

// read reads a recorded stream or session as Run reads its CLI's output.
func read(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	return gemini.ReadStream(r, gemini.CaptureWorkdir, emit)
}

func TestParseGolden(t *testing.T) {
	plugintest.Goldens(t, streams(t), "", *update, read)
}

func TestACPGolden(t *testing.T) {
	plugintest.Goldens(t, sessions(t), "acp_", *update, read)
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

func FuzzReadStream(f *testing.F) {
	plugintest.FuzzSeeds(f, append(streams(f), sessions(f)...))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}` + "\n" + `{"jsonrpc":"2.0","method":"session/update","params":{"update":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := read(bytes.NewReader(append(data, data...)), func(core.Event) {}); err != nil {
			t.Fatal(err)
		}
	})
}

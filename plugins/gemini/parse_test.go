package gemini_test

import (
	"flag"
	"io"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// recordings are the real CLI's output recorded by TestCapture (repository
// testdata/gemini), hand-written streams beside this test for events the
// fake model cannot make the CLI produce, and recorded `gemini --acp`
// sessions (the CLI's side).
var recordings = plugintest.Recordings{
	Streams:       []string{"../../testdata/gemini/*.jsonl", "testdata/*.jsonl"},
	Sessions:      []string{"../../testdata/gemini/acp/*.jsonl"},
	SessionPrefix: "acp_",
	Read: func(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
		return gemini.ReadStream(r, plugintest.RecordedWorkdir, emit)
	},
}

func TestParseGolden(t *testing.T) { recordings.Goldens(t, *update) }

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
	recordings.Fuzz(f, []byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}`+"\n"+`{"jsonrpc":"2.0","method":"session/update","params":{"update":null}}`))
}

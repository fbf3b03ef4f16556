package claude_test

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// streams are the real CLI's output recorded by plugintest's capture test.
func streams(t testing.TB) []string {
	return plugintest.Streams(t, "../../testdata/claude/*.jsonl")
}

// read reads a recorded stream as Run reads its CLI's output.
func read(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
	return claude.ReadStream(r, "", emit)
}

func parse(t *testing.T, r io.Reader) string {
	t.Helper()
	return plugintest.ReadRendered(t, read, r)
}

// sessions are recorded control-protocol sessions (TestCaptureControl).
func sessions(t testing.TB) []string {
	return plugintest.Streams(t, "../../testdata/claude/control/*.jsonl")
}

// Recorded streams, replayed whole and in pieces.
func TestParseGolden(t *testing.T) {
	plugintest.Goldens(t, streams(t), "", *update, read)
}

// Recorded control-protocol sessions (a tool allowed and one denied, the
// agent's question, a plan approved, an interrupt), replayed whole and in
// pieces: their questions are emitted as a turn's are.
func TestControlGolden(t *testing.T) {
	plugintest.Goldens(t, sessions(t), "control_", *update, func(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
		return claude.ReadStream(r, captureWorkdir, emit)
	})
}

func TestParseToleratesGarbage(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`not json at all`,
		`{"type":"system","subtype":"init","session_id":"s1","model":"m"}`,
		`{"type":"brand_new_type","whatever":[1,2,3]}`,
		`{"type":"assistant","message":"not an object"}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"hi"},{"type":"mystery"}]},"parent_tool_use_id":null}`,
		"\x00\xff\xfe",
		`{"type":"result","subtype":"success","is_error":false,"session_id":"s1"`, // cut mid-line
	}, "\n")
	got := parse(t, strings.NewReader(in))
	want := "session token=\"s1\" model=\"m\"\ntext \"hi\"\nresult none\n"
	if got != want {
		t.Errorf("parse = %q, want %q", got, want)
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Bash":                                  "Bash",
		"mcp__process-manager__restart_process": "Process Manager · Restart Process",
		"mcp__github__create_pull_request":      "Github · Create Pull Request",
		"mcp__solo":                             "Solo",
	} {
		if got := claude.ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzReadStream(f *testing.F) {
	plugintest.FuzzSeeds(f, append(streams(f), sessions(f)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := read(bytes.NewReader(append(data, data...)), func(core.Event) {}); err != nil {
			t.Fatal(err)
		}
	})
}

package claude_test

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// recordings are the real CLI's output recorded by plugintest's capture
// test, and its control-protocol sessions (TestCaptureControl: a tool
// allowed and one denied, the agent's question, a plan approved, an
// interrupt), whose questions are emitted as a turn's are.
var recordings = plugintest.Recordings{
	Streams:       []string{"../../testdata/claude/*.jsonl"},
	Sessions:      []string{"../../testdata/claude/control/*.jsonl"},
	SessionPrefix: "control_",
	Read: func(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
		return claude.ReadStream(r, plugintest.RecordedWorkdir, emit)
	},
}

// parse reads r as Run reads its CLI's output, rendered for comparison.
func parse(t *testing.T, r io.Reader) string {
	t.Helper()
	return plugintest.ReadRendered(t, recordings.Read, r)
}

// Recorded streams and sessions, replayed whole and in pieces.
func TestParseGolden(t *testing.T) { recordings.Goldens(t, *update) }

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

func FuzzReadStream(f *testing.F) { recordings.Fuzz(f) }

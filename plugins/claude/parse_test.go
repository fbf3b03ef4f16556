package claude_test

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
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
// interrupt, background work, the task list, a subagent), whose questions
// are emitted as a turn's are. They seed FuzzReadStream too.
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

// TestPlanQuestion: the plan an ExitPlanMode request asks to approve is
// found wherever the CLI has it: in the request (Claude Code 2.1.197),
// only in the model's call (2.1.332 sends the request's input empty), or
// in the plan file the model wrote (2.1.332's way: <config>/plans/<slug>.md),
// which is read only from the CLI's plans folder.
func TestPlanQuestion(t *testing.T) {
	t.Parallel()
	plansDir := filepath.Join(t.TempDir(), ".claude", "plans")
	elsewhere := t.TempDir()
	for dir, text := range map[string]string{plansDir: "1. From the file\n2. Done\n", elsewhere: "1. Not a plan\n"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bright-plan.md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	toolUse := func(id, name string, input any) string {
		in, _ := json.Marshal(input)
		return `{"type":"assistant","message":{"id":"m` + id + `","content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + string(in) + `}]},"parent_tool_use_id":null}`
	}
	request := func(input string) string {
		return `{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"ExitPlanMode","input":` + input + `,"tool_use_id":"t2"}}`
	}
	write := func(dir string) string {
		return toolUse("t1", "Write", map[string]any{"file_path": filepath.Join(dir, "bright-plan.md"), "content": "…"})
	}
	bare := toolUse("t2", "ExitPlanMode", map[string]any{})
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"in the request", []string{toolUse("t2", "ExitPlanMode", map[string]any{"plan": "1. Asked"}), request(`{"plan":"1. Asked"}`)}, "1. Asked"},
		{"in the call only", []string{toolUse("t2", "ExitPlanMode", map[string]any{"plan": "1. Called"}), request(`{}`)}, "1. Called"},
		{"in the plan file", []string{write(plansDir), bare, request(`{}`)}, "1. From the file\n2. Done\n"},
		{"in a file elsewhere", []string{write(elsewhere), bare, request(`{}`)}, ""},
		{"nowhere", []string{bare, request(`{}`)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			p := claude.NewParser(func(core.Event) {})
			p.PlansDir = plansDir
			p.OnPermission = func(req claude.PermissionRequest) { asked = append(asked, req.Plan) }
			for _, l := range tt.lines {
				p.Line([]byte(l))
			}
			if len(asked) != 1 || asked[0] != tt.want {
				t.Fatalf("plans asked about %q, want one: %q", asked, tt.want)
			}
		})
	}
}

// An MCP server the CLI could not connect to (Claude Code 2.1.332's init
// line with the bot's server unreachable) is a warning in the reply; one
// that connected, or is still connecting, is not.
func TestFailedMCPServersAreAWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, servers, want string
	}{
		{"failed", `[{"name":"jakebot","status":"failed","source":"dynamic"}]`,
			`block warning text="MCP server jakebot failed to connect: the agent goes without its tools this turn."` + "\n"},
		{"several", `[{"name":"jakebot","status":"connected"},{"name":"db","status":"failed"},{"name":"gh","status":"failed"}]`,
			`block warning text="MCP server db, gh failed to connect: the agent goes without its tools this turn."` + "\n"},
		{"connected", `[{"name":"jakebot","status":"connected"},{"name":"slow","status":"pending"}]`, ""},
		{"none", `[]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"type":"system","subtype":"init","session_id":"s1","model":"m","mcp_servers":` + tc.servers + `}`
			want := `session token="s1" model="m"` + "\n" + tc.want + "result none\n"
			if got := parse(t, strings.NewReader(in)); got != want {
				t.Errorf("parse = %q, want %q", got, want)
			}
		})
	}
}

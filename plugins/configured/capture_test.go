package configured_test

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/configured"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var (
	capture = flag.Bool("capture", false, "run the pinned ACP agents against the fake model and rewrite testdata/<agent>/acp/*.jsonl at the repository root")
	update  = flag.Bool("update", false, "rewrite the golden files in testdata/")
)

// qwenCases are the `qwen --acp` sessions the golden tests replay: one
// turn each, every question answered with allow unless the case says.
var qwenCases = []plugintest.SessionCase{
	{Name: "text", Replies: []plugintest.Reply{{Text: []string{"Hello", " from", " the fake."}}}},
	{Name: "approval", Replies: []plugintest.Reply{
		{Text: []string{"Creating ", "the file."}, Tool: &plugintest.ToolCall{Name: "run_shell_command",
			Input: map[string]any{"command": "echo made > made.txt", "is_background": false}}},
		{Text: []string{"Done."}},
	}},
	{Name: "denied", Answer: core.Answer{Decision: core.Deny, Reason: "not here"}, Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "run_shell_command", Input: map[string]any{"command": "touch denied.txt", "is_background": false}}},
		{Text: []string{"I may not."}},
	}},
	{Name: "api_error", Replies: []plugintest.Reply{{Status: 400, Message: "API key not valid."}}},
	// todo_write (off by default: qwenSystemSettings), twice: Qwen Code
	// sends each list as a plan update (the whole list), not as a tool
	// call.
	{Name: "plan", Replies: []plugintest.Reply{
		{Tool: &plugintest.ToolCall{Name: "todo_write", Input: map[string]any{"todos": []any{
			map[string]any{"id": "1", "content": "Read the code", "status": "completed"},
			map[string]any{"id": "2", "content": "Write the fix", "status": "in_progress"},
			map[string]any{"id": "3", "content": "Run the tests", "status": "pending"},
		}}}},
		{Tool: &plugintest.ToolCall{Name: "todo_write", Input: map[string]any{"todos": []any{
			map[string]any{"id": "1", "content": "Read the code", "status": "completed"},
			map[string]any{"id": "2", "content": "Write the fix", "status": "completed"},
			map[string]any{"id": "3", "content": "Run the tests", "status": "in_progress"},
		}}}},
		{Text: []string{"Planned."}},
	}},
}

// qwenSystemSettings are the cases' own settings, given to Qwen Code as
// its system settings file, which takes precedence over the home's.
var qwenSystemSettings = map[string]string{"plan": `{"tools":{"todoWrite":{"enabled":true}}}`}

// TestCaptureQwen rewrites the recorded Qwen Code sessions from the real
// CLI: go test ./plugins/configured -run TestCaptureQwen -capture.
func TestCaptureQwen(t *testing.T) {
	plugintest.RecordSessions(t, *capture, "qwen", "acp", qwenCases, func(t *testing.T, bin string, c plugintest.SessionCase) (core.Plugin, plugintest.Model) {
		model, home := plugintest.NewOpenAI(t, c.Replies...), plugintest.Home(t)
		env := plugintest.QwenEnv(t, home)
		if settings, ok := qwenSystemSettings[c.Name]; ok {
			path := filepath.Join(home, "system-settings.json")
			if err := os.WriteFile(path, []byte(settings), 0o644); err != nil {
				t.Fatal(err)
			}
			env = append(env, "QWEN_CODE_SYSTEM_SETTINGS_PATH="+path)
		}
		return configured.New(qwenSpec(bin, home, plugintest.QwenArgs(model), env...), nil), model
	})
}

// acpRecordings are the ACP agents' sessions recorded by the captures
// (repository testdata/<agent>/acp), read as a mode acp plugin reads them.
var acpRecordings = plugintest.Recordings{
	Sessions:      []string{"../../testdata/qwen/acp/*.jsonl"},
	SessionPrefix: "qwen_",
	Read: func(r io.Reader, emit func(core.Event)) (*core.TurnResult, error) {
		return configured.New(configured.Spec{ID: "agent", Name: "Agent", Bin: "agent", Mode: configured.ModeACP}, nil).ReadStream(r, emit)
	},
}

func TestACPGolden(t *testing.T) {
	plugintest.Goldens(t, plugintest.Streams(t, acpRecordings.Sessions...), acpRecordings.SessionPrefix, *update, acpRecordings.Read)
}

func FuzzACP(f *testing.F) {
	acpRecordings.Fuzz(f,
		[]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}`+"\n"+`{"jsonrpc":"2.0","method":"session/update","params":{"update":null}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":1}]}}}`),
		[]byte(`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"toolCall":{"toolCallId":"t","_meta":{"toolName":"mcp__jakebot__x"}},"options":null}}`))
}

package plugintest

import (
	"os"
	"path/filepath"
	"testing"
)

// Qwen Code (`qwen --acp`) runs on the fake OpenAI Responses API (see
// OpenAI). Observed with qwen 0.24.4: one POST /v1/responses per model
// turn, once managed auto-memory and the follow-up suggestion are off
// (after each turn they would ask the model to extract memories and to
// guess the user's next message, each taking a reply of the script) and
// the approval mode is default (auto asks the model, as a classifier,
// whether a tool is safe).
const qwenSettings = `{"ui": {"enableFollowupSuggestions": false}, "tools": {"approvalMode": "default"},
 "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
 "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}`

// QwenEnv returns the environment for Qwen Code in home, whose settings
// it writes. QWEN_CODE_LEGACY_MCP_BLOCKING=1 makes session/new connect
// to the MCP servers it is given before it answers: by default it connects
// in the background, and a prompt sent at once may reach the model before
// their tools do (the tool is then "not found in registry").
func QwenEnv(t testing.TB, home string) []string {
	t.Helper()
	writeSettings(t, filepath.Join(home, ".qwen"), qwenSettings)
	return []string{"HOME=" + home, "TMPDIR=" + tmpDir(t, home), "OPENAI_API_KEY=", "NO_COLOR=1", "QWEN_CODE_LEGACY_MCP_BLOCKING=1"}
}

// writeSettings writes a CLI's settings.json into dir.
func writeSettings(t testing.TB, dir, settings string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
}

// QwenArgs returns the arguments of `qwen --acp` on o.
func QwenArgs(o *OpenAI) []string {
	return []string{"--acp", "--auth-type", "openai-responses", "--openai-base-url", o.URL, "--openai-api-key", "fake-key", "--model", "fake-model"}
}

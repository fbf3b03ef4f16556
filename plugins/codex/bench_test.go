package codex_test

import (
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it, beside the split-and-decode baseline.
func BenchmarkParse(b *testing.B) {
	plugintest.BenchParse(b, streams(b), read)
}

// BenchmarkTurnStart is message → model request for a Codex turn through
// the app-server started cold (spawned with the message) and warm
// (spawned before, its thread resumed); the medians are reported.
func BenchmarkTurnStart(b *testing.B) {
	model := plugintest.NewOpenAI(b)
	home := plugintest.Home(b)
	p := codex.New(codex.Config{Bin: plugintest.CLIPath(b, "codex"), Args: plugintest.CodexArgs(model), Model: "gpt-5.5",
		Home: filepath.Join(home, ".codex"), Env: plugintest.CodexEnv(b, home)}, nil)
	plugintest.BenchTurnStart(b, model, p, plugintest.Workdir(b))
}

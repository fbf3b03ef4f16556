package gemini_test

import (
	"testing"

	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it, beside the split-and-decode baseline.
func BenchmarkParse(b *testing.B) {
	plugintest.BenchParse(b, streams(b), read)
}

// BenchmarkTurnStart is message → model request for a Gemini CLI turn
// through ACP started cold (spawned with the message) and warm (spawned
// before, its session loaded); the medians are reported.
func BenchmarkTurnStart(b *testing.B) {
	model := plugintest.NewGemini(b)
	home := plugintest.Home(b)
	p := gemini.New(gemini.Config{Bin: plugintest.CLIPath(b, "gemini"), Model: "gemini-2.5-flash", Home: home,
		Env: plugintest.GeminiEnv(b, model, home)}, nil)
	plugintest.BenchTurnStart(b, model, p, plugintest.Workdir(b))
}

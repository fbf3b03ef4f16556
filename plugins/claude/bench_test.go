package claude_test

import (
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it, beside the split-and-decode baseline.
func BenchmarkParse(b *testing.B) {
	plugintest.BenchParse(b, streams(b), read)
}

// BenchmarkTurnStart measures what a warm CLI saves: the time from handing
// a message to the CLI until the model gets the request, for a turn
// started cold (the CLI spawned with the message) and warm (spawned
// before, waiting resumed on the session). Each op is one cold and one
// warm turn of the same conversation; the medians are reported.
func BenchmarkTurnStart(b *testing.B) {
	model := plugintest.NewAnthropic(b)
	home := plugintest.Home(b)
	p := claude.New(claude.Config{Bin: plugintest.CLIPath(b, "claude"), PermissionMode: "default",
		ConfigDir: filepath.Join(home, ".claude"), Env: plugintest.ClaudeEnv(b, model, home)}, nil)
	plugintest.BenchTurnStart(b, model, p, plugintest.Workdir(b))
}

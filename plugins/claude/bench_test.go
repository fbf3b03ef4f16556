package claude_test

import (
	"io"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// BenchmarkParse is the plugin's parser over a 50 MB stream, read as Run
// reads it, beside the split-and-decode baseline.
func BenchmarkParse(b *testing.B) {
	plugintest.BenchParse(b, streams(b), func(r io.Reader) error {
		emit := func(core.Event) {}
		return claude.ReadStream(r, claude.NewParser(emit), emit)
	})
}

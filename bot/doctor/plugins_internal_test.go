package doctor

import (
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/bot"
)

// Doctor checks the binaries the plugins would run: each CLI's own name
// unless its *_BIN says otherwise, with the plugin's install hint.
func TestBuiltinCLIsAreThePluginsOwn(t *testing.T) {
	t.Parallel()
	var cfg bot.Config
	cfg.Codex.Bin = "/opt/codex/bin/codex"
	got := map[string]cli{}
	for _, c := range builtinCLIs(cfg, Options{Getenv: func(string) string { return "" }, Home: t.TempDir()}) {
		got[c.id] = c
	}
	for id, want := range map[string]struct{ bin, install string }{
		"claude": {"claude", "npm install -g @anthropic-ai/claude-code`, or set CLAUDE_BIN"},
		"codex":  {"/opt/codex/bin/codex", "npm install -g @openai/codex`, or set CODEX_BIN"},
		"gemini": {"gemini", "npm install -g @google/gemini-cli`, or set GEMINI_BIN"},
	} {
		if c := got[id]; c.bin != want.bin || !strings.Contains(c.install, want.install) {
			t.Errorf("%s: bin %q, install %q; want %q and %q", id, c.bin, c.install, want.bin, want.install)
		}
	}
}

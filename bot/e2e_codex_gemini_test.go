package bot_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// otherCLI sets up one of the other built-in CLIs against its fake model
// in a fixture's home.
type otherCLI struct {
	id, name string
	// setup starts the fake with replies, configures the plugin in cfg,
	// and returns the fake.
	setup func(t testing.TB, f *fixture, cfg *bot.Config, replies ...plugintest.Reply) fakeModel
}

// fakeModel is what tests use of a fake model server.
type fakeModel interface {
	// Push adds replies to the script.
	Push(replies ...plugintest.Reply)
	// Requests returns the main requests so far.
	Requests() []plugintest.Request
	// Arrived delivers each request as it arrives, before its answer.
	Arrived() <-chan plugintest.Request
}

// claudeCLI is Claude Code as an otherCLI, for tables of every CLI: its
// fake model is the fixture's own.
var claudeCLI = otherCLI{"claude", "Claude Code", func(t testing.TB, f *fixture, cfg *bot.Config, replies ...plugintest.Reply) fakeModel {
	f.model.Push(replies...)
	return f.model
}}

var otherCLIs = []otherCLI{
	{"codex", "Codex", func(t testing.TB, f *fixture, cfg *bot.Config, replies ...plugintest.Reply) fakeModel {
		o := plugintest.NewOpenAI(t, replies...)
		cfg.Codex = codex.Config{Bin: plugintest.CLIPath(t, "codex"), Args: plugintest.CodexArgs(o), Model: "gpt-5.5",
			Sandbox: "workspace-write", Home: filepath.Join(f.home, ".codex"),
			Env: append(plugintest.CodexEnv(t, f.home), f.mark)}
		return o
	}},
	{"gemini", "Gemini CLI", func(t testing.TB, f *fixture, cfg *bot.Config, replies ...plugintest.Reply) fakeModel {
		g := plugintest.NewGemini(t, replies...)
		cfg.Gemini = gemini.Config{Bin: plugintest.CLIPath(t, "gemini"), Model: "gemini-2.5-flash", ApprovalMode: "auto_edit",
			Home: f.home, Env: append(plugintest.GeminiEnv(t, g, f.home), f.mark)}
		return g
	}},
}

// TestConsoleOtherCLIs drives Codex and Gemini CLI through the console as
// TestConsole* drive Claude Code: a streamed reply, the listing, a resume
// by id in a new bot whose request carries the first exchange, and a model
// error shown as an error.
func TestConsoleOtherCLIs(t *testing.T) {
	t.Parallel()
	for _, cli := range otherCLIs {
		t.Run(cli.id, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			cfg := f.config()
			model := cli.setup(t, f, &cfg,
				plugintest.Reply{Text: []string{"The code ", "word is ", "tangerine."}},
				plugintest.Reply{Text: []string{"It was tangerine."}},
				plugintest.Reply{Status: 400, Message: "malformed request from the test"},
			)
			c := f.start(cfg)
			c.say("/"+cli.id+" start", "pick a code word")
			c.expect(cli.name + ` conversation started in ` + regexp.QuoteMeta(f.workdir))
			c.expect(`The code word is tangerine\.`, `— \d+\.\ds`)
			c.say("/status")
			id := sessionRE.FindString(c.expect(`Session: ` + sessionRE.String()))
			c.say("/" + cli.id + " conversations")
			c.expect(cli.name+` conversations in `, `1\. `+id[:8])
			c.close()

			// A new bot knows the conversation only from the CLI's history.
			c = f.start(cfg)
			c.say("/"+cli.id+" resume "+id[:8], "what was the word?")
			c.expect(`Resumed ` + cli.name + ` conversation ` + id)
			c.expect(`It was tangerine\.`)
			c.say("and again")
			c.expect(`❌ \*\*Error:\*\*`)
			c.close()
			reqs := model.Requests()
			if len(reqs) < 2 {
				t.Fatalf("model saw %d requests", len(reqs))
			}
			if text := reqs[1].Text(); !strings.Contains(text, "pick a code word") || !strings.Contains(text, "tangerine") {
				t.Fatalf("resumed request lacks the first exchange: %q", text)
			}
		})
	}
}

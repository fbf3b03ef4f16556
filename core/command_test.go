package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

func TestParse(t *testing.T) {
	t.Parallel()
	commands := core.NewCommands([]core.Plugin{plugintest.Named{PluginID: "claude"}, plugintest.Named{PluginID: "codex"}})
	tests := []struct {
		in      string
		want    core.Command
		wantErr string
	}{
		{"/help", core.Command{Name: core.CmdHelp}, ""},
		{"  /HELP  ", core.Command{Name: core.CmdHelp}, ""},
		{"/claude start", core.Command{Name: core.CmdStart, Plugin: "claude"}, ""},
		{"/claude start ~/my project", core.Command{Name: core.CmdStart, Plugin: "claude", Arg: "~/my project"}, ""},
		{"/codex conversations", core.Command{Name: core.CmdConversations, Plugin: "codex"}, ""},
		{"/claude resume abc123", core.Command{Name: core.CmdResume, Plugin: "claude", Arg: "abc123"}, ""},
		{"/resume", core.Command{Name: core.CmdResume}, ""},
		{"/resume 3", core.Command{Name: core.CmdResume, Arg: "3"}, ""},
		{"/conversation end", core.Command{Name: core.CmdEnd}, ""},
		{"/end", core.Command{Name: core.CmdEnd}, ""},
		{"/status", core.Command{Name: core.CmdStatus}, ""},
		{"/status all", core.Command{Name: core.CmdStatus, Arg: "all"}, ""},
		{"/stop", core.Command{Name: core.CmdStop}, ""},
		{"/workdir", core.Command{Name: core.CmdWorkdir}, ""},
		{"/workdir set ../x", core.Command{Name: core.CmdWorkdirSet, Arg: "../x"}, ""},
		{"/ask codex --write fix it", core.Command{Name: core.CmdAsk, Arg: "codex --write fix it"}, ""},
		{"/ask", core.Command{}, "usage: /ask <plugin> [--write] <question>"},
		{"/review", core.Command{Name: core.CmdReview}, ""},
		{"/review codex", core.Command{Name: core.CmdReview, Arg: "codex"}, ""},
		{"/review fix 1a2b3c4d", core.Command{Name: core.CmdReviewFix, Arg: "1a2b3c4d"}, ""},
		{"/review dismiss 1a2b3c4d", core.Command{Name: core.CmdReviewDismiss, Arg: "1a2b3c4d"}, ""},
		{"/pair", core.Command{Name: core.CmdPair}, ""},
		{"/pair codex 3", core.Command{Name: core.CmdPair, Arg: "codex 3"}, ""},
		{"/bogus", core.Command{}, "unknown command /bogus"},
		{"/gemini start", core.Command{}, "unknown command /gemini"},
		{"/claude", core.Command{}, "usage: /claude start"},
		{"/claude frobnicate", core.Command{}, "usage: /claude start"},
		{"/claude resume ; rm -rf ~", core.Command{}, "usage: /claude resume <id>"},
		{"/claude conversations extra", core.Command{}, "usage: /claude conversations"},
		{"/conversation", core.Command{}, "usage: /conversation end"},
		{"/workdir set", core.Command{}, "usage: /workdir set <path>"},
		{"/workdir frob", core.Command{}, "usage: /workdir | /workdir set <path>"},
		{"/Claude START", core.Command{Name: core.CmdStart, Plugin: "claude"}, ""},
		{"/help me", core.Command{}, "usage: /help"},
		{"/stop now", core.Command{}, "usage: /stop"},
		{"/status everything", core.Command{}, "usage: /status [all]"},
		{"/resume a b", core.Command{}, "usage: /resume [id]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := commands.Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(core.UserMessage(err), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/help", "/claude start ~/x", "/claude resume ; rm -rf ~", "/workdir set ../../etc", "/\x00", "/resume \xff"} {
		f.Add(s)
	}
	commands := core.NewCommands([]core.Plugin{plugintest.Named{PluginID: "claude"}})
	f.Fuzz(func(t *testing.T, s string) {
		c, err := commands.Parse(s)
		if err == nil && c.Name == "" {
			t.Fatalf("Parse(%q) = %+v with no name and no error", s, c)
		}
		if err != nil && core.UserMessage(err) == "" {
			t.Fatalf("Parse(%q): empty user message", s)
		}
	})
}

// modelPlugin adds a command of its own to the table.
type modelPlugin struct{ *plugintest.Scripted }

func (modelPlugin) Commands() []core.CommandSpec {
	return []core.CommandSpec{{Name: "model", Words: []string{"model"}, Arg: "name", Kind: core.ArgWord, Help: "switch the model"}}
}

func (modelPlugin) RunCommand(ctx context.Context, conv core.Conversation, cmd core.Command) (string, error) {
	if conv.Plugin == "" {
		return "", core.Errorf("no conversation to switch")
	}
	return "model " + cmd.Arg + " for the conversation in " + conv.Workdir, nil
}

// Every entry parses back from its usage, is listed by /help and carries
// its handler: the table is the one place a command is declared.
func TestEveryCommandParsesFromItsUsage(t *testing.T) {
	t.Parallel()
	commands := core.NewCommands([]core.Plugin{plugintest.Named{PluginID: "claude", PluginName: "Claude Code"},
		modelPlugin{&plugintest.Scripted{PluginID: "fake", PluginName: "Fake fake"}}})
	help := commands.Help()
	var seen []string
	for _, s := range commands.Specs() {
		line := "/" + strings.Join(s.Words, " ")
		switch s.Kind {
		case core.ArgWord, core.ArgText:
			line += " x"
		case core.ArgFlag:
			line += " " + s.Arg
		}
		cmd, err := commands.Parse(strings.ToUpper(line[:2]) + line[2:])
		if err != nil || cmd.Name != s.Name || cmd.Plugin != s.Plugin {
			t.Errorf("Parse(%q) = %+v, %v; want %s of %q", line, cmd, err, s.Name, s.Plugin)
		}
		if s.Run == nil {
			t.Errorf("%s has no handler (CommandSpec.Run)", s.Usage())
		}
		listed := s.Usage() + " — " + s.Help
		if s.Plugin != "" && slices.Contains([]core.CommandName{core.CmdStart, core.CmdConversations, core.CmdResume, core.CmdStartNow}, s.Name) {
			listed = "/<plugin>" + strings.TrimPrefix(listed, "/"+s.Plugin)
		}
		if !s.Alias && !strings.Contains(help, listed) {
			t.Errorf("/help lacks %q:\n%s", listed, help)
		}
		seen = append(seen, s.Usage())
	}
	if !slices.Contains(seen, "/fake model <name>") || !slices.Contains(seen, "/claude start [workdir]") {
		t.Errorf("table = %v, want the plugins' entries and the plugin's own", seen)
	}
	if !strings.Contains(help, "(/<plugin>: /claude, /fake)") {
		t.Errorf("/help does not say which plugins /<plugin> stands for:\n%s", help)
	}
}

// /help with the built-in plugins fits one message of the smallest
// platform limit (Discord's 2,000 characters): a help in two messages
// reads as two answers.
func TestHelpFitsOneMessage(t *testing.T) {
	t.Parallel()
	var plugins []core.Plugin
	for _, id := range []string{"claude", "codex", "gemini"} {
		plugins = append(plugins, plugintest.Named{PluginID: id})
	}
	help := core.NewCommands(plugins).Help()
	if n := utf8.RuneCountInString(help); n > 2000 {
		t.Errorf("/help is %d characters, over one Discord message:\n%s", n, help)
	}
}

func TestRouterRunsAPluginsOwnCommand(t *testing.T) {
	t.Parallel()
	f := newRouterFixtureWith(t, echo, nil, func(cfg *core.RouterConfig) {
		reg, err := core.NewRegistry(modelPlugin{&plugintest.Scripted{PluginID: "fake", PluginName: "Fake fake", Script: echo}})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Plugins = reg
	})
	f.say("alice", "/fake model opus")
	f.expect("no conversation to switch")
	f.say("alice", "/fake start")
	f.expect("conversation started")
	f.say("alice", "/fake model opus")
	f.expect("model opus for the conversation in " + f.root)
	f.say("alice", "/fake model")
	f.expect("usage: /fake model <name>")
	f.say("alice", "/help")
	f.expectHelp("/fake model <name> — switch the model")
}

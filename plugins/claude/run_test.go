package claude_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	p := claude.New(claude.Config{Settings: cliproc.Settings{Model: "sonnet", Args: []string{"--max-turns", "3"}},
		PermissionMode: "acceptEdits"}, nil)
	got := p.Args(core.Turn{Prompt: "--help me; rm -rf ~", SessionID: "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b"})
	// The message goes on stdin, never among the arguments.
	want := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
		"--input-format", "stream-json", "--replay-user-messages",
		"--resume", "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b", "--permission-mode", "acceptEdits", "--model", "sonnet",
		"--max-turns", "3"}
	if !slices.Equal(got, want) {
		t.Fatalf("Args = %q\nwant   %q", got, want)
	}
}

// newFixture runs the real pinned Claude Code against a fake model, in
// the default permission mode, where every shell command is asked about.
func newFixture(t testing.TB, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	return newFixtureWith(t, nil, replies...)
}

// newFixtureWith is newFixture with args added to the CLI's.
func newFixtureWith(t testing.TB, args []string, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	return newWalledFixture(t, nil, args, replies...)
}

// newWalledFixture is newFixtureWith with the CLI behind sb.
func newWalledFixture(t testing.TB, sb *cliproc.Sandbox, args []string, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	bin := plugintest.CLIPath(t, "claude")
	model := plugintest.NewAnthropic(t, replies...)
	return plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return claude.New(claude.Config{PermissionMode: "default", ConfigDir: filepath.Join(home, ".claude"),
			Settings: cliproc.Settings{Bin: bin, Args: args, Env: append(plugintest.ClaudeEnv(t, model, home), mark), Sandbox: sb}}, nil)
	})
}

func shell(cmd string) *plugintest.ToolCall {
	return &plugintest.ToolCall{Name: "Bash", Input: map[string]any{"command": cmd, "description": "Run it"}}
}

func TestPlugin(t *testing.T) {
	plugintest.Suite{
		Fixture:   newFixture,
		Shell:     shell,
		ShellTool: "Bash",
		// The mode that runs everything unasked (bypassPermissions) is
		// refused to root; a tool allowed beforehand runs in any mode.
		Unasked: func(t testing.TB, replies ...plugintest.Reply) *plugintest.Fixture {
			return newFixtureWith(t, []string{"--allowedTools", "Bash"}, replies...)
		},
		ShellDetail: "done",
		Walled: func(t testing.TB, sb *cliproc.Sandbox, replies ...plugintest.Reply) *plugintest.Fixture {
			return newWalledFixture(t, sb, []string{"--allowedTools", "Bash"}, replies...)
		},
		ModelError: "API Error: 400 API key not valid.",
		DenialSays: "The user denied this tool call: not here",
		Grow: func(f *plugintest.Fixture, token string) {
			plugintest.AppendTo(f.T, filepath.Join(f.Home, ".claude", "projects", "*", token+".jsonl"), "\n")
		},
		ImageMark:    `"type":"image"`,
		WarmsUnasked: true,
		Steers:       true,
		Bare: func(bin, home string) core.Plugin {
			return claude.New(claude.Config{ConfigDir: filepath.Join(home, ".claude"), Settings: cliproc.Settings{Bin: bin}}, nil)
		},
		Install: "`npm install -g @anthropic-ai/claude-code`, or set CLAUDE_BIN",
		Writes:  readOnlyWrites,
	}.Run(t)
}

// The real Claude Code told of the bot's MCP server where none answers:
// its init line says the server failed, and the reply warns that the
// agent goes without the bot's tools, the turn going on.
func TestAnUnreachableToolsServerIsAWarning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Hello."}})
	turn := f.Turn("hi", "", false)
	turn.Tools = &core.ToolAccess{URL: "http://127.0.0.1:1/mcp", Token: "t", Tools: []string{core.ToolNotify}}
	tr := plugintest.RunTurn(context.Background(), t, f.Plugin, turn)
	warnings := tr.Blocks(core.BlockWarning)
	if tr.Err != nil || len(warnings) != 1 || !strings.Contains(warnings[0].Text, "MCP server jakebot failed to connect") {
		t.Fatalf("Run = %+v, %v with warnings %+v; want the turn, warned", tr.Result, tr.Err, warnings)
	}
}

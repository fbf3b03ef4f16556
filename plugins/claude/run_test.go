package claude_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	p := claude.New(claude.Config{PermissionMode: "acceptEdits", Model: "sonnet", Args: []string{"--max-turns", "3"}}, nil)
	got := p.Args(core.Turn{Prompt: "--help me; rm -rf ~", ResumeToken: "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b"})
	want := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
		"--resume", "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b", "--permission-mode", "acceptEdits", "--model", "sonnet",
		"--max-turns", "3", "--", "--help me; rm -rf ~"}
	if !slices.Equal(got, want) {
		t.Fatalf("Args = %q\nwant   %q", got, want)
	}
}

func TestCheckResumeID(t *testing.T) {
	t.Parallel()
	p := claude.New(claude.Config{}, nil)
	for id, ok := range map[string]bool{
		"1ce8f0c3-3b99-4530-a951-2990725e4bdf": true,
		"; rm -rf ~":                           false,
		"--dangerously-skip-permissions":       false,
		"":                                     false,
	} {
		if err := p.CheckResumeID(id); (err == nil) != ok {
			t.Errorf("CheckResumeID(%q) = %v", id, err)
		}
	}
}

// newFixture runs the real pinned Claude Code against a fake model, in
// the default permission mode, where every shell command is asked about.
func newFixture(t *testing.T, replies ...plugintest.Reply) *plugintest.Fixture {
	t.Helper()
	bin := plugintest.CLIPath(t, "claude")
	model := plugintest.NewAnthropic(t, replies...)
	return plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return claude.New(claude.Config{Bin: bin, PermissionMode: "default", ConfigDir: filepath.Join(home, ".claude"),
			Env: append(plugintest.ClaudeEnv(t, model, home), mark)}, nil)
	})
}

func shell(cmd string) *plugintest.ToolCall {
	return &plugintest.ToolCall{Name: "Bash", Input: map[string]any{"command": cmd, "description": "Run it"}}
}

func TestPlugin(t *testing.T) {
	plugintest.Suite{
		Fixture:    newFixture,
		Shell:      shell,
		ShellTool:  "Bash",
		DenialSays: "The user denied this tool call: not here",
		Grow: func(f *plugintest.Fixture, token string) {
			plugintest.AppendTo(f.T, filepath.Join(f.Home, ".claude", "projects", "*", token+".jsonl"), "\n")
		},
		ImageMark: `"type":"image"`,
		Missing:   func(bin string) core.Plugin { return claude.New(claude.Config{Bin: bin}, nil) },
		Install:   "`npm install -g @anthropic-ai/claude-code`, or set CLAUDE_BIN",
	}.Run(t)
}

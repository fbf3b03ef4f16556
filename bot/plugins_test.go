package bot_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot"
)

// echoConsole runs the bot on the console with a plugin from PLUGINS_FILE,
// the test binary as its CLI, in dir; in is the console's input. It
// returns what the console printed.
func echoConsole(t *testing.T, dir, in string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	yaml := fmt.Sprintf(`plugins:
  - id: echo
    name: Echo CLI
    bin: %s
    args: ["{message}"]
    mode: plain
    env: {JAKEBOT_HELPER: echo, GORACE: atexit_sleep_ms=0}
`, os.Args[0])
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := bot.Config{AllowedRoots: []string{dir}, TurnTimeout: time.Minute, QueueLimit: 5, LogLevel: "warn", PluginsFile: file}
	cfg.Claude.Bin = "jakebot-no-such-claude"
	var out strings.Builder
	if err := bot.Run(context.Background(), cfg, bot.Stdio{In: strings.NewReader(in), Out: &out, Err: t.Output()}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out.String()
}

// TestConfiguredPluginThroughTheConsole runs a plugin from PLUGINS_FILE
// (the test binary as its CLI) through the console like a built-in one.
func TestConfiguredPluginThroughTheConsole(t *testing.T) {
	t.Parallel()
	out := echoConsole(t, t.TempDir(), "/help\n/echo start\nhello there\n/status\n")
	for _, want := range []string{
		"/<plugin> start [workdir] — start a conversation",
		"(/<plugin>: /claude, /codex, /echo, /gemini)",
		"Echo CLI conversation started in",
		"echo: hello there",
		"Session: none: Echo CLI cannot resume a session, so each turn starts fresh",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("console output lacks %q:\n%s", want, out)
		}
	}
}

// The console cannot send files: /file says so and prints the path.
func TestFileOnTheConsolePrintsThePath(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte("# Report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := echoConsole(t, dir, "/echo start\n/file report.md\n")
	if want := "This platform cannot send files. The file is " + filepath.Join(dir, "report.md") + " (9 bytes)."; !strings.Contains(out, want) {
		t.Errorf("console output lacks %q:\n%s", want, out)
	}
}

func TestBadPluginsFileStopsStartUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "plugins.yaml")
	yaml := "plugins:\n  - id: claude\n    bin: sh\n    args: [-c, \"echo '{message}'\"]\n    mode: plain\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := bot.Config{AllowedRoots: []string{dir}, LogLevel: "warn", PluginsFile: file}
	err := bot.Run(context.Background(), cfg, bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: t.Output()})
	if err == nil {
		t.Fatal("Run with a bad plugins file: no error")
	}
	for _, want := range []string{
		file + `:2: id "claude" is taken: a built-in plugin has it`,
		file + `:4: args: "echo '{message}'" puts a placeholder inside a larger or quoted string`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// REVIEW_PLUGIN must name a configured plugin: the bot says so at start.
func TestUnknownReviewPluginStopsStartUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := bot.Config{AllowedRoots: []string{dir}, LogLevel: "warn", ReviewPlugin: "nobody", ReviewRounds: 2}
	err := bot.Run(context.Background(), cfg, bot.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: t.Output()})
	if err == nil || !strings.Contains(err.Error(), `REVIEW_PLUGIN="nobody": no such plugin is configured`) {
		t.Fatalf("Run with REVIEW_PLUGIN=nobody: %v", err)
	}
}

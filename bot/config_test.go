package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dotenv := filepath.Join(dir, ".env")
	os.WriteFile(dotenv, []byte(strings.Join([]string{
		"# a comment",
		"",
		"ALLOWED_ROOTS=/srv/a,/srv/b",
		`CLAUDE_MODEL="sonnet"`,
		"export TURN_TIMEOUT=5m",
		"CLAUDE_ARGS=--allowedTools Bash --max-turns 3",
		"LOG_LEVEL=warn",
	}, "\n")), 0o600)

	cfg, err := LoadConfig([]string{"LOG_LEVEL=debug", "QUEUE_LIMIT=2"}, dotenv)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.AllowedRoots, "|"); got != "/srv/a|/srv/b" {
		t.Errorf("AllowedRoots = %q", got)
	}
	if cfg.Claude.Model != "sonnet" || cfg.TurnTimeout != 5*time.Minute || cfg.QueueLimit != 2 {
		t.Errorf("cfg = %+v", cfg)
	}
	if cfg.LogLevel != "debug" {
		t.Errorf("LogLevel = %q: the environment must win over .env", cfg.LogLevel)
	}
	if got := strings.Join(cfg.Claude.Args, "|"); got != "--allowedTools|Bash|--max-turns|3" {
		t.Errorf("Claude.Args = %q", got)
	}
	if cfg.Claude.Bin != "claude" || cfg.Claude.PermissionMode != "acceptEdits" {
		t.Errorf("defaults not applied: %+v", cfg.Claude)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.env")
	os.WriteFile(bad, []byte("NOT A PAIR\n"), 0o600)
	for name, tc := range map[string]struct {
		env    []string
		dotenv string
		want   string
		// notWant is a variable set alongside the bad one whose value is
		// fine, so the error must not blame it.
		notWant string
	}{
		"bad duration":  {[]string{"TURN_TIMEOUT=soon"}, "", "TURN_TIMEOUT", ""},
		"bad level":     {[]string{"LOG_LEVEL=loud"}, "", "LOG_LEVEL", ""},
		"bad console":   {[]string{"CONSOLE_INPUT=voice"}, "", "CONSOLE_INPUT", ""},
		"bad .env line": {nil, bad, "bad.env:1", ""},
		"unbalanced quote": {
			[]string{`CLAUDE_ARGS=--allowedTools "Bash(git log:*)`}, "", "CLAUDE_ARGS", ""},
		"unbalanced quote in the second plugin's args": {
			[]string{"CLAUDE_ARGS=--verbose", `CODEX_ARGS=-c 'x`}, "", "CODEX_ARGS", "CLAUDE_ARGS"},
		"bad interval in the second platform": {
			[]string{"DISCORD_EDIT_INTERVAL=1s", "SLACK_EDIT_INTERVAL=often"}, "", "SLACK_EDIT_INTERVAL", "DISCORD_EDIT_INTERVAL"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadConfig(tc.env, tc.dotenv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadConfig error = %v, want one mentioning %q", err, tc.want)
			}
			if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("LoadConfig error = %v, blames %s, whose value is fine", err, tc.notWant)
			}
		})
	}
	if _, err := LoadConfig(nil, filepath.Join(dir, "missing.env")); err != nil {
		t.Fatalf("a missing .env is fine, got %v", err)
	}
}

func TestLoadConfigArgsQuoting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dotenv := filepath.Join(dir, ".env")
	os.WriteFile(dotenv, []byte(`CLAUDE_ARGS='--allowedTools "Bash(git log:*)" --verbose'`+"\n"), 0o600)
	want := []string{"--allowedTools", "Bash(git log:*)", "--verbose"}
	for _, tc := range []struct {
		name    string
		environ []string
		dotenv  string
	}{
		{"environment", []string{`CLAUDE_ARGS=--allowedTools "Bash(git log:*)" --verbose`}, ""},
		{".env with outer quotes", nil, dotenv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadConfig(tc.environ, tc.dotenv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, []string(cfg.Claude.Args)); diff != "" {
				t.Errorf("Claude.Args (-want +got):\n%s", diff)
			}
		})
	}
	for _, key := range []string{"CODEX_ARGS", "GEMINI_ARGS"} {
		cfg, err := LoadConfig([]string{key + `=--title "a b"`}, "")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{"CODEX_ARGS": cfg.Codex.Args, "GEMINI_ARGS": cfg.Gemini.Args}[key]
		if diff := cmp.Diff([]string{"--title", "a b"}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
}

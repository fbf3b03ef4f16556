package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/remote"
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

	cfg, err := LoadConfig([]string{"LOG_LEVEL=debug", "QUEUE_LIMIT=2", "LONG_REPLY_PAGES=1", "SHUTDOWN_DEADLINE=2s",
		"CODEX_BIN=/opt/codex", "GEMINI_MODEL=gemini-2.5-pro", "GEMINI_BIN="}, dotenv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ShutdownDeadline != 2*time.Second || cfg.ShutdownGrace != 30*time.Second {
		t.Errorf("ShutdownDeadline, ShutdownGrace = %v, %v, want 2s, 30s", cfg.ShutdownDeadline, cfg.ShutdownGrace)
	}
	if got := strings.Join(cfg.AllowedRoots, "|"); got != "/srv/a|/srv/b" {
		t.Errorf("AllowedRoots = %q", got)
	}
	if cfg.Claude.Model != "sonnet" || cfg.TurnTimeout != 5*time.Minute || cfg.QueueLimit != 2 || cfg.LongReplyPages != 1 {
		t.Errorf("cfg = %+v", cfg)
	}
	if cfg.LogLevel != "debug" {
		t.Errorf("LogLevel = %q: the environment must win over .env", cfg.LogLevel)
	}
	if got := strings.Join(cfg.Claude.Args, "|"); got != "--allowedTools|Bash|--max-turns|3" {
		t.Errorf("Claude.Args = %q", got)
	}
	if bin := claude.New(cfg.Claude, nil).CLI().Bin; bin != "claude" || cfg.Claude.PermissionMode != "acceptEdits" {
		t.Errorf("defaults not applied: bin %q, %+v", bin, cfg.Claude)
	}
	// Each plugin reads its own prefix; an empty *_BIN is the default.
	if cfg.Codex.Bin != "/opt/codex" || cfg.Gemini.Model != "gemini-2.5-pro" || cfg.Codex.Model != "" ||
		gemini.New(cfg.Gemini, nil).CLI().Bin != "gemini" {
		t.Errorf("Codex %+v, Gemini %+v; want CODEX_BIN and GEMINI_MODEL in their own plugin", cfg.Codex.Settings, cfg.Gemini.Settings)
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
		"bad duration":         {[]string{"TURN_TIMEOUT=soon"}, "", "TURN_TIMEOUT", ""},
		"bad level":            {[]string{"LOG_LEVEL=loud"}, "", "LOG_LEVEL", ""},
		"bad console":          {[]string{"CONSOLE_INPUT=voice"}, "", "CONSOLE_INPUT", ""},
		"bad approvals":        {[]string{"APPROVALS=sometimes"}, "", "APPROVALS", ""},
		"negative pages":       {[]string{"LONG_REPLY_PAGES=-1"}, "", "LONG_REPLY_PAGES", ""},
		"limit warn above 100": {[]string{"LIMIT_WARN=120"}, "", "LIMIT_WARN", ""},
		"limit warn 0":         {[]string{"LIMIT_WARN=0"}, "", "LIMIT_WARN", ""},
		"negative unattended":  {[]string{"UNATTENDED_TURNS_PER_DAY=-1"}, "", "UNATTENDED_TURNS_PER_DAY", ""},
		"no deadline":          {[]string{"SHUTDOWN_DEADLINE=0s"}, "", "SHUTDOWN_DEADLINE", ""},
		"bad deadline":         {[]string{"SHUTDOWN_DEADLINE=-1s"}, "", "SHUTDOWN_DEADLINE", ""},
		"no background limit":  {[]string{"BACKGROUND_LIMIT=0s"}, "", "BACKGROUND_LIMIT", ""},
		"no review rounds":     {[]string{"REVIEW_ROUNDS=0"}, "", "REVIEW_ROUNDS", ""},
		"too many rounds":      {[]string{"REVIEW_ROUNDS=11"}, "", "REVIEW_ROUNDS", ""},
		"bad .env line":        {nil, bad, "bad.env:1", ""},
		"unbalanced quote": {
			[]string{`CLAUDE_ARGS=--allowedTools "Bash(git log:*)`}, "", "CLAUDE_ARGS", ""},
		"a comment in args": {
			[]string{"CLAUDE_ARGS=--verbose", "GEMINI_ARGS=--yolo #why"}, "", "GEMINI_ARGS", "CLAUDE_ARGS"},
		"a variable in args": {
			[]string{`CODEX_ARGS=-C "$HOME"`}, "", `CODEX_ARGS="-C \"$HOME\"": $HOME is not expanded`, ""},
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

// A CLI gets the environment and .env, without the bot's own secrets.
func TestLoadConfigChildEnv(t *testing.T) {
	t.Parallel()
	dotenv := filepath.Join(t.TempDir(), ".env")
	os.WriteFile(dotenv, []byte(strings.Join([]string{
		"OPENAI_API_KEY=sk-from-dotenv",
		"CODEX_HOME=/srv/codex-home",
		"TELEGRAM_TOKEN=123:from-dotenv",
		"TELEGRAM_WEBHOOK_SECRET=hook-secret-from-dotenv",
		"PATH=/from/dotenv",
	}, "\n")), 0o600)
	cfg, err := LoadConfig([]string{"PATH=/usr/bin", "DISCORD_TOKEN=discord-from-env", "SLACK_BOT_TOKEN=xoxb-from-env",
		"SLACK_APP_TOKEN=xapp-from-env", "SLACK_SIGNING_SECRET=signing-from-env", "ANTHROPIC_API_KEY=sk-ant-from-env", "HOME=/home/u",
		"NATS_CREDS=/etc/jakebot/nats.creds", "NATS_NKEY=/etc/jakebot/nats.nk", "NATS_KEY=/etc/jakebot/client.key",
		"WEB_TLS_KEY=/etc/jakebot/tls.key", "WEB_TLS_CERT=/etc/jakebot/tls.crt"}, dotenv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"PATH=/usr/bin", "ANTHROPIC_API_KEY=sk-ant-from-env", "HOME=/home/u", "WEB_TLS_CERT=/etc/jakebot/tls.crt",
		"CODEX_HOME=/srv/codex-home", "OPENAI_API_KEY=sk-from-dotenv"}
	if got := strings.Join(cfg.ChildEnv, " "); got != strings.Join(want, " ") {
		t.Errorf("ChildEnv = %q\nwant       %q", got, want)
	}
	if got := strings.Join(cfg.DotenvWithheld, ","); got != "TELEGRAM_TOKEN,TELEGRAM_WEBHOOK_SECRET" {
		t.Errorf("DotenvWithheld = %q", got)
	}
	if got := strings.Join(WithheldVars(), ","); got != "DISCORD_TOKEN,MATRIX_ACCESS_TOKEN,MATTERMOST_TOKEN,NATS_PASSWORD,SLACK_APP_TOKEN,SLACK_BOT_TOKEN,TELEGRAM_TOKEN,TELEGRAM_WEBHOOK_SECRET,WEB_TOKEN" {
		t.Errorf("WithheldVars = %q", got)
	}
}

// Files that hold the bot's own secrets must not lie where an agent can
// read them.
func TestCheckSecretFiles(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	roots, err := core.NewRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outside, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	tokenEnv := []string{"TELEGRAM_TOKEN"}
	for name, tc := range map[string]struct {
		cfg  Config
		want string // "" for no error
	}{
		"tokens in .env in the root":     {Config{Dotenv: filepath.Join(root, ".env"), DotenvWithheld: tokenEnv}, ".env, which sets TELEGRAM_TOKEN"},
		"only an API key in .env":        {Config{Dotenv: filepath.Join(root, ".env")}, ""},
		"tokens in .env outside":         {Config{Dotenv: filepath.Join(outside, ".env"), DotenvWithheld: tokenEnv}, ""},
		"state file in the root":         {Config{StateFile: filepath.Join(root, "sub", "state.json")}, "STATE_FILE"},
		"state file through a symlink":   {Config{StateFile: filepath.Join(link, "state.json")}, "STATE_FILE"},
		"state file off":                 {Config{StateFile: "off"}, ""},
		"state file outside":             {Config{StateFile: filepath.Join(outside, "state.json")}, ""},
		"audit log in the root":          {Config{AuditLog: filepath.Join(root, "audit.jsonl")}, "AUDIT_LOG"},
		"audit log outside, state in it": {Config{AuditLog: filepath.Join(outside, "a"), StateFile: filepath.Join(root, "s")}, "STATE_FILE"},
		"NATS credentials in the root":   {Config{NATS: remote.Config{Creds: filepath.Join(root, "nats.creds")}}, "NATS_CREDS"},
		"NATS nkey seed in the root":     {Config{NATS: remote.Config{NkeySeed: filepath.Join(root, "seed.nk")}}, "NATS_NKEY"},
		"NATS client key in the root":    {Config{NATS: remote.Config{Key: filepath.Join(link, "client.key")}}, "NATS_KEY"},
		"TLS key in the root":            {Config{Web: web.Config{TLSKey: filepath.Join(root, "tls", "key.pem")}}, "WEB_TLS_KEY"},
		"credentials outside":            {Config{NATS: remote.Config{Creds: filepath.Join(outside, "c"), Key: filepath.Join(outside, "k")}, Web: web.Config{TLSKey: filepath.Join(outside, "t")}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.cfg.CheckSecretFiles(roots)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "inside the allowed roots")):
				t.Errorf("error %v, want one about %s", err, tc.want)
			}
		})
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

// A dollar budget without a token budget leaves the CLIs that report no
// cost unbounded: start-up warns of it.
func TestBudgetWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		warn bool
	}{
		{nil, false},
		{[]string{"BUDGET_TURN_USD=1"}, true},
		{[]string{"BUDGET_USER_DAILY_USD=5"}, true},
		{[]string{"BUDGET_USER_DAILY_USD=5", "BUDGET_USER_DAILY_TOKENS=2000000"}, false},
		{[]string{"BUDGET_USER_DAILY_TOKENS=2000000"}, false},
	} {
		cfg, err := LoadConfig(tc.env, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.BudgetWarning(); (got != "") != tc.warn || (tc.warn && !strings.Contains(got, "Set BUDGET_USER_DAILY_TOKENS to bound every CLI")) {
			t.Errorf("%v: BudgetWarning() = %q, want a warning: %v", tc.env, got, tc.warn)
		}
		if got := cfg.budgets().UserDailyTokens; tc.env != nil && strings.Contains(strings.Join(tc.env, " "), "TOKENS") && got != 2000000 {
			t.Errorf("%v: the router's token budget = %d", tc.env, got)
		}
	}
}

func TestAgentToolsSetting(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		env     string
		want    []string
		wantErr string
	}{
		{"", core.AllAgentTools, ""},
		{"AGENT_TOOLS=off", nil, ""},
		{"AGENT_TOOLS=all", core.AllAgentTools, ""},
		{"AGENT_TOOLS=notify, send_file,notify", []string{"notify", "send_file"}, ""},
		{"AGENT_TOOLS=send_file,rm_rf", nil, `AGENT_TOOLS: no tool "rm_rf"`},
	} {
		var environ []string
		if tt.env != "" {
			environ = []string{tt.env}
		}
		cfg, err := LoadConfig(environ, "")
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err %v, want %q", tt.env, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.env, err)
		}
		got, _ := cfg.agentTools()
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q: tools (-want +got):\n%s", tt.env, diff)
		}
	}
}

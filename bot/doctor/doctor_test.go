package doctor_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/bot/doctor"
	"github.com/jake-bot/jake-bot/platforms/mattermost"
	"github.com/jake-bot/jake-bot/platforms/mattermost/mattermosttest"
	"github.com/jake-bot/jake-bot/platforms/slack"
	"github.com/jake-bot/jake-bot/platforms/telegram"
	"github.com/jake-bot/jake-bot/platforms/web"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote"
	"github.com/nats-io/nats-server/v2/server"
)

// script writes an executable shell script standing in for a CLI.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// row returns the report's check called name.
func row(t *testing.T, r doctor.Report, name string) doctor.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in the report:\n%s", name, text(t, r))
	return doctor.Check{}
}

func text(t *testing.T, r doctor.Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func expect(t *testing.T, r doctor.Report, name string, s doctor.Status, detail string) {
	t.Helper()
	c := row(t, r, name)
	if c.Status != s || !strings.Contains(c.Detail, detail) {
		t.Errorf("check %q = %s %q, want %s with %q", name, c.Status, c.Detail, s, detail)
	}
}

func TestDoctorAllGood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	claude := script(t, dir, "claude", `echo "2.1.0 (Claude Code)"`)
	aider := script(t, dir, "aider", `echo "aider 0.86.1"`)
	plugins := filepath.Join(dir, "plugins.yaml")
	os.WriteFile(plugins, []byte("plugins:\n  - id: aider\n    bin: "+aider+"\n    args: ['{message}']\n    mode: pty\n"), 0o644)
	worktrees := filepath.Join(dir, "worktrees")
	os.Mkdir(worktrees, 0o755)
	cfg := bot.Config{AllowedRoots: []string{dir}, DefaultWorkdir: dir, PluginsFile: plugins, WorktreeDir: worktrees,
		TranscribeCmd: []string{"sh", "-c", "cat {file}"}}
	cfg.Claude.Bin = claude
	r := doctor.Run(context.Background(), cfg, doctor.Options{
		Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-secret-value"}), Home: dir,
	})
	out := text(t, r)
	if r.Failed() {
		t.Errorf("report failed:\n%s", out)
	}
	expect(t, r, "allowed root", doctor.OK, dir)
	expect(t, r, "DEFAULT_WORKDIR", doctor.OK, dir)
	expect(t, r, "WORKTREE_DIR", doctor.OK, worktrees)
	expect(t, r, "git", doctor.OK, "git version")
	expect(t, r, "TRANSCRIBE_CMD", doctor.OK, "/sh")
	expect(t, r, "PLUGINS_FILE", doctor.OK, "1 plugins (aider)")
	expect(t, r, "claude CLI", doctor.OK, claude+" (2.1.0 (Claude Code))")
	expect(t, r, "claude auth", doctor.OK, "ANTHROPIC_API_KEY is set")
	expect(t, r, "aider CLI", doctor.OK, "(aider 0.86.1)")
	expect(t, r, "console", doctor.OK, "runs on the console")
	if strings.Contains(out, "secret-value") {
		t.Errorf("the report prints a secret:\n%s", out)
	}
	if !strings.Contains(out, "AREA") || !strings.Contains(out, "0 failed") || !strings.Contains(out, "jakebot can start") {
		t.Errorf("report table:\n%s", out)
	}
}

func TestDoctorFindsWhatIsBroken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins.yaml")
	os.WriteFile(plugins, []byte("plugins:\n  - id: aider\n    bin: jakebot-no-such-aider\n    args: ['{message}']\n    mode: pty\n"), 0o644)
	cfg := bot.Config{AllowedRoots: []string{filepath.Join(dir, "missing"), dir}, PluginsFile: plugins,
		WorktreeDir: "/", TranscribeCmd: []string{"jakebot-no-such-whisper", "{file}"}}
	cfg.Claude.Bin = "jakebot-no-such-claude"
	r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir})
	if !r.Failed() {
		t.Fatalf("report did not fail:\n%s", text(t, r))
	}
	expect(t, r, "allowed root", doctor.Fail, "no such directory")
	// Start-up would refuse both.
	expect(t, r, "WORKTREE_DIR", doctor.Fail, `workdir "/" is outside the allowed roots`)
	expect(t, r, "TRANSCRIBE_CMD", doctor.Fail, "jakebot-no-such-whisper not found")
	expect(t, r, "claude CLI", doctor.Warn, "jakebot-no-such-claude not found. Install it with `npm install -g @anthropic-ai/claude-code`")
	expect(t, r, "claude auth", doctor.Warn, "no API key (ANTHROPIC_API_KEY")
	expect(t, r, "aider CLI", doctor.Fail, "jakebot-no-such-aider not found. Install it, or fix its bin in "+plugins+":2")
	expect(t, r, "any CLI", doctor.Fail, "no plugin's CLI is installed")
	if out := text(t, r); !strings.Contains(out, "something required is broken") {
		t.Errorf("closing line:\n%s", out)
	}
}

func TestDoctorBadPluginsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins.yaml")
	os.WriteFile(plugins, []byte("plugins:\n  - id: status\n    bin: x\n    args: ['--p={message}']\n    mode: plain\n"), 0o644)
	cfg := bot.Config{AllowedRoots: []string{dir}, PluginsFile: plugins}
	cfg.Claude.Bin = script(t, dir, "claude", "echo 1.0")
	r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir})
	expect(t, r, "PLUGINS_FILE", doctor.Fail, plugins+`:2: id "status" is taken`)
	expect(t, r, "PLUGINS_FILE", doctor.Fail, plugins+`:4: args: "--p={message}" puts a placeholder inside`)
}

func TestDoctorVersionProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		name, body, want string
	}{
		{"hangs", "sleep 30", "failed: no answer within 200ms"},
		{"fails", "echo 'unknown option --version' >&2; exit 2", "failed: exit code 2: unknown option --version"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := bot.Config{AllowedRoots: []string{dir}}
			cfg.Claude.Bin = script(t, dir, "claude-"+tt.name, tt.body)
			start := time.Now()
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir, Timeout: 200 * time.Millisecond})
			expect(t, r, "claude CLI", doctor.Warn, tt.want)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("doctor took %s with a hanging CLI", d)
			}
		})
	}
}

func TestDoctorAuthHintFiles(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte(`{"token":"secret-login"}`), 0o600)
	cfg := bot.Config{AllowedRoots: []string{home}}
	cfg.Claude.Bin = script(t, home, "claude", "echo 1.0")
	r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: home})
	expect(t, r, "claude auth", doctor.OK, "login file "+filepath.Join(home, ".claude", ".credentials.json")+" exists")
	if strings.Contains(text(t, r), "secret-login") {
		t.Error("the report prints the login file's contents")
	}
}

func TestDoctorGeminiHome(t *testing.T) {
	t.Parallel()
	// creds writes Gemini's login file under dir/.gemini and returns it.
	creds := func(t *testing.T, dir string) string {
		t.Helper()
		path := filepath.Join(dir, ".gemini", "oauth_creds.json")
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(`{"token":"secret-login"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tt := range []struct {
		name string
		// in is where the login file is: "home", "cli home" or "cfg home".
		in string
		// cliHome sets GEMINI_CLI_HOME; cfgHome sets cfg.Gemini.Home.
		cliHome, cfgHome bool
		want             doctor.Status
	}{
		{"user's home", "home", false, false, doctor.OK},
		{"GEMINI_CLI_HOME", "cli home", true, false, doctor.OK},
		{"GEMINI_CLI_HOME from the config", "cfg home", false, true, doctor.OK},
		{"GEMINI_CLI_HOME set, file only in the user's home", "home", true, false, doctor.Warn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dirs := map[string]string{"home": t.TempDir(), "cli home": t.TempDir(), "cfg home": t.TempDir()}
			file := creds(t, dirs[tt.in])
			vars := map[string]string{}
			if tt.cliHome {
				vars["GEMINI_CLI_HOME"] = dirs["cli home"]
			}
			cfg := bot.Config{AllowedRoots: []string{dirs["home"]}}
			if tt.cfgHome {
				cfg.Gemini.Home = dirs["cfg home"]
			}
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(vars), Home: dirs["home"]})
			detail := "login file " + file + " exists"
			if tt.want != doctor.OK {
				detail = filepath.Join(dirs["cli home"], ".gemini", "oauth_creds.json")
			}
			expect(t, r, "gemini auth", tt.want, detail)
		})
	}
}

func TestDoctorSlack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := fakeSlack(t)
	for _, tt := range []struct {
		name          string
		app, botToken string
		users         []string
		online        bool
		checks        map[string]string // name -> "status detail"
	}{
		{"well formed, offline", "xapp-1-A-good", "xoxb-good", []string{"U1"}, false, map[string]string{
			"slack token": "ok SLACK_APP_TOKEN is set and well formed", "slack allow-list": "ok 1 users",
			"slack online": "skip run `jakebot doctor --online`"}},
		{"swapped tokens", "xoxb-good", "xapp-1-A-good", []string{"U1"}, false, map[string]string{
			"slack token": "FAIL SLACK_BOT_TOKEN is not a bot token (xoxb-…)"}},
		{"no allow-list", "xapp-1-A-good", "xoxb-good", nil, false, map[string]string{
			"slack allow-list": "FAIL SLACK_ALLOWED_USERS is empty: the bot would serve nobody"}},
		{"everyone", "xapp-1-A-good", "xoxb-good", []string{"*"}, false, map[string]string{
			"slack allow-list": "warn SLACK_ALLOWED_USERS has \"*\""}},
		{"online and accepted", "xapp-1-A-good", "xoxb-good", []string{"U1"}, true, map[string]string{
			"slack auth.test": "ok accepted: bot user jakebot in team Acme", "slack socket mode": "ok apps.connections.open accepted"}},
		{"online and refused", "xapp-1-A-revoked", "xoxb-revoked", []string{"U1"}, true, map[string]string{
			"slack auth.test": "FAIL SLACK_BOT_TOKEN refused: invalid_auth", "slack socket mode": "FAIL SLACK_APP_TOKEN refused: invalid_auth"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := bot.Config{AllowedRoots: []string{dir}}
			cfg.Claude.Bin = script(t, t.TempDir(), "claude", "echo 1.0")
			cfg.Slack.AppToken, cfg.Slack.BotToken, cfg.Slack.AllowedUsers, cfg.Slack.APIURL = slack.Secret(tt.app), slack.Secret(tt.botToken), tt.users, srv.URL+"/api/"
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir, Online: tt.online, HTTP: srv.Client()})
			out := text(t, r)
			for name, want := range tt.checks {
				status, detail, _ := strings.Cut(want, " ")
				found := false
				for _, c := range r.Checks {
					if c.Name == name && c.Status.String() == status && strings.Contains(c.Detail, detail) {
						found = true
					}
				}
				if !found {
					t.Errorf("no check %q %s %q in:\n%s", name, status, detail, out)
				}
			}
			for _, secret := range []string{"xoxb-good", "xapp-1-A-good", "xoxb-revoked"} {
				if strings.Contains(out, secret) {
					t.Errorf("the report prints the token %q", secret)
				}
			}
		})
	}
}

func TestDoctorTelegramFromConfig(t *testing.T) {
	t.Parallel()
	const tok = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/bot"+tok+"/getMe" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"ok":true,"result":{"username":"jake_bot"}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := bot.Config{AllowedRoots: []string{dir}}
	cfg.Claude.Bin = script(t, dir, "claude", "echo 1.0")
	cfg.Telegram.Token, cfg.Telegram.APIEndpoint = telegram.Secret(tok), srv.URL+"/bot%s/%s"
	r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir, Online: true, HTTP: srv.Client()})
	expect(t, r, "telegram token", doctor.OK, "bot id 123456789")
	expect(t, r, "telegram allow-list", doctor.Fail, "TELEGRAM_ALLOWED_USERS is empty")
	expect(t, r, "telegram getMe", doctor.OK, "accepted: @jake_bot")
	if strings.Contains(text(t, r), "AAHdqTcv") {
		t.Error("the report prints the Telegram token")
	}
}

// A Mattermost bot configured in bot.Config is checked, online against
// the fake server.
func TestDoctorMattermostFromConfig(t *testing.T) {
	t.Parallel()
	fake := mattermosttest.New(t)
	dir := t.TempDir()
	cfg := bot.Config{AllowedRoots: []string{dir}}
	cfg.Claude.Bin = script(t, dir, "claude", "echo 1.0")
	cfg.Mattermost.URL, cfg.Mattermost.Token = fake.URL, mattermost.Secret(mattermosttest.Token)
	r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir, Online: true, HTTP: &http.Client{}})
	expect(t, r, "mattermost token", doctor.OK, "MATTERMOST_TOKEN is set and well formed")
	expect(t, r, "mattermost allow-list", doctor.Fail, "MATTERMOST_ALLOWED_USERS is empty")
	expect(t, r, "mattermost /users/me", doctor.OK, "accepted: bot @jakebot")
	if strings.Contains(text(t, r), mattermosttest.Token) {
		t.Error("the report prints the Mattermost token")
	}
}

func TestDoctorWeb(t *testing.T) {
	t.Parallel()
	const tok = "a-long-enough-web-token-0123456789"
	for _, tc := range []struct {
		name, addr, token, cert string
		row                     string
		want                    doctor.Status
		detail                  string
	}{
		{"loopback", "127.0.0.1:8080", tok, "", "web address", doctor.OK, "loopback only"},
		{"bare port", ":8080", tok, "", "web address", doctor.OK, "loopback only"},
		{"public without TLS", "0.0.0.0:8080", tok, "", "web address", doctor.Warn, "without TLS"},
		{"short token", "127.0.0.1:8080", "short", "", "web settings", doctor.Fail, "WEB_TOKEN must be set"},
		{"missing cert", "0.0.0.0:8443", tok, "/nonexistent/cert.pem", "web tls", doctor.Fail, "WEB_TLS_CERT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := bot.Config{AllowedRoots: []string{dir}}
			cfg.Claude.Bin = script(t, dir, "claude", "echo 1.0")
			cfg.Web = web.Config{Addr: tc.addr, Token: web.Secret(tc.token), TLSCert: tc.cert}
			if tc.cert != "" {
				cfg.Web.TLSKey = tc.cert
			}
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir})
			expect(t, r, tc.row, tc.want, tc.detail)
			if strings.Contains(text(t, r), tok) {
				t.Error("the report prints the web token")
			}
		})
	}
}

func TestDoctorNATS(t *testing.T) {
	t.Parallel()
	ns := runNATS(t, &server.Options{Username: "gateway", Password: "nats-secret-password"})
	for _, tc := range []struct {
		name     string
		password string
		want     doctor.Status
		detail   string
	}{
		{"signed in", "nats-secret-password", doctor.OK, "round trip"},
		{"wrong password", "wrong-password-here", doctor.Fail, "nats: connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := bot.Config{AllowedRoots: []string{dir}}
			cfg.Claude.Bin = script(t, dir, "claude", "echo 1.0")
			cfg.NATS = remote.Config{URL: ns.ClientURL(), User: "gateway", Password: remote.Secret(tc.password), RunnerName: "box2"}
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: dir})
			expect(t, r, "nats", tc.want, tc.detail)
			if tc.want == doctor.OK {
				expect(t, r, "jetstream", doctor.Fail, "nats-server -js")
			}
			expect(t, r, "runner name", doctor.OK, "box2")
			if strings.Contains(text(t, r), tc.password) {
				t.Error("the report prints the NATS password")
			}
		})
	}
}

// The doctor refuses what start-up refuses: a file holding the bot's own
// secrets inside the allowed roots, whatever the configuration says.
func TestDoctorSecretFiles(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		dotenv  string // written in the root, or outside with everything outside
		environ func(root, outside string) []string
		status  doctor.Status
		detail  string
	}{
		{"only a model API key in .env", "ANTHROPIC_API_KEY=sk-ant-in-the-root\n", nil, doctor.OK, "no file holding the bot's own secrets"},
		{"a platform token in .env", "TELEGRAM_TOKEN=123:in-the-root\n", nil, doctor.Fail, ".env, which sets TELEGRAM_TOKEN"},
		{"NATS credentials in the root", "", func(root, _ string) []string { return []string{"NATS_CREDS=" + filepath.Join(root, "bot.creds")} },
			doctor.Fail, "NATS_CREDS"},
		{"the TLS key in the root", "", func(root, _ string) []string { return []string{"WEB_TLS_KEY=" + filepath.Join(root, "key.pem")} },
			doctor.Fail, "WEB_TLS_KEY"},
		{"the state file in the root", "", func(root, _ string) []string { return []string{"STATE_FILE=" + filepath.Join(root, "state.json")} },
			doctor.Fail, "STATE_FILE"},
		{"everything outside", "TELEGRAM_TOKEN=123:outside\n", func(_, outside string) []string {
			return []string{"NATS_CREDS=" + filepath.Join(outside, "bot.creds"), "NATS_KEY=" + filepath.Join(outside, "client.key"),
				"WEB_TLS_KEY=" + filepath.Join(outside, "key.pem"), "AUDIT_LOG=" + filepath.Join(outside, "audit.jsonl")}
		}, doctor.OK, "no file holding the bot's own secrets"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, outside := t.TempDir(), t.TempDir()
			dotenv := filepath.Join(root, ".env")
			if tt.name == "everything outside" {
				dotenv = filepath.Join(outside, ".env")
			}
			if tt.dotenv != "" {
				if err := os.WriteFile(dotenv, []byte(tt.dotenv), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			environ := []string{"ALLOWED_ROOTS=" + root, "STATE_FILE=off"}
			if tt.environ != nil {
				environ = append(environ, tt.environ(root, outside)...)
			}
			cfg, err := bot.LoadConfig(environ, dotenv)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Claude.Bin = "jakebot-no-such-claude"
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(nil), Home: t.TempDir()})
			expect(t, r, "secret files", tt.status, tt.detail)
			if out := text(t, r); strings.Contains(out, "in-the-root") {
				t.Errorf("the report prints a secret:\n%s", out)
			}
		})
	}
}

// Doctor says which sandbox the CLIs would run behind, and with none what
// an agent could reach.
func TestDoctorSandbox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	off := doctor.Run(context.Background(), bot.Config{AllowedRoots: []string{dir}, SandboxMode: "off"},
		doctor.Options{Getenv: env(nil), Home: dir})
	expect(t, off, "SANDBOX", doctor.Warn, "every agent can read and write whatever jakebot's user can")
	plugintest.Sandbox(t, cliproc.SandboxBwrap, "")
	on := doctor.Run(context.Background(), bot.Config{AllowedRoots: []string{dir}, SandboxMode: "bwrap"},
		doctor.Options{Getenv: env(nil), Home: dir})
	expect(t, on, "SANDBOX", doctor.OK, "bwrap: each CLI sees only its workdir")
}

// TestDoctorLoginFileInTheStateDir: doctor looks for each CLI's login
// file in the state folder where the plugin finds it, the Config's first.
func TestDoctorLoginFileInTheStateDir(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		// login is the login file's path in the folder dirs[in].
		login, in string
		// envVar is set to dirs["env"]; cfg sets the plugin's Config to
		// dirs["cfg"].
		envVar string
		cfg    func(*bot.Config, string)
	}{
		{"claude, the home's", ".claude/.credentials.json", "home", "", nil},
		{"claude, CLAUDE_CONFIG_DIR", ".credentials.json", "env", "CLAUDE_CONFIG_DIR", nil},
		{"claude, the config's", ".credentials.json", "cfg", "CLAUDE_CONFIG_DIR", func(c *bot.Config, d string) { c.Claude.ConfigDir = d }},
		{"codex, the home's", ".codex/auth.json", "home", "", nil},
		{"codex, CODEX_HOME", "auth.json", "env", "CODEX_HOME", nil},
		{"codex, the config's", "auth.json", "cfg", "CODEX_HOME", func(c *bot.Config, d string) { c.Codex.Home = d }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dirs := map[string]string{"home": t.TempDir(), "env": t.TempDir(), "cfg": t.TempDir()}
			file := filepath.Join(dirs[tt.in], tt.login)
			os.MkdirAll(filepath.Dir(file), 0o700)
			if err := os.WriteFile(file, []byte(`{"token":"secret-login"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{}
			if tt.envVar != "" {
				vars[tt.envVar] = dirs["env"]
			}
			cfg := bot.Config{AllowedRoots: []string{dirs["home"]}}
			if tt.cfg != nil {
				tt.cfg(&cfg, dirs["cfg"])
			}
			r := doctor.Run(context.Background(), cfg, doctor.Options{Getenv: env(vars), Home: dirs["home"]})
			id, _, _ := strings.Cut(tt.name, ",")
			expect(t, r, id+" auth", doctor.OK, "login file "+file+" exists")
		})
	}
}

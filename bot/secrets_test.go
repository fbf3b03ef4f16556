package bot_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/discord/discordtest"
	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// envProbe is a shell command, run by the real CLI's tool, that prints
// the model API key and its own environment, finds the bot (its ancestor
// named jakebot) and tries to read its environment and open its memory,
// and writes every /proc/*/environ it can read, in full, to environs.txt
// in the workdir (too long for a turn: the CLI would keep it out).
const envProbe = `echo "key=$ANTHROPIC_API_KEY"; env
p=$$; while [ "$p" -gt 1 ] && [ "$(cat /proc/$p/comm)" != jakebot ]; do p=$(awk '/^PPid:/{print $2}' /proc/$p/status); done
echo "bot-pid=$p"
if cat /proc/$p/environ >/dev/null 2>&1; then echo bot-environ=read; else echo bot-environ=denied; fi
if (exec 3</proc/$p/mem) 2>/dev/null; then echo bot-mem=open; else echo bot-mem=denied; fi
for f in /proc/[0-9]*/environ; do if e=$(tr '\0' '\n' <"$f" 2>/dev/null); then printf '== %s\n%s\n' "$f" "$e"; fi; done >environs.txt
echo "environs=$(grep -c '^== ' environs.txt)"; echo probe-end`

// Known secret values in the environment never reach a log line, the
// audit log, the metrics, a chat or a CLI (whose tool prints every
// environment it can read, and cannot read the bot's environment or
// memory); and the audit log and health endpoints say what they should.
func TestSecretsNeverReachTheOutput(t *testing.T) {
	t.Parallel()
	// The platforms' tokens are their fakes', which check them; the
	// others are made up.
	dc := discordtest.New(t) // Discord and Telegram run too, serving nobody
	secrets := map[string]string{
		"SLACK_BOT_TOKEN":         slacktest.BotToken,
		"SLACK_APP_TOKEN":         slacktest.AppToken,
		"DISCORD_TOKEN":           dc.Token,
		"TELEGRAM_TOKEN":          telegramtest.Token,
		"ANTHROPIC_API_KEY":       "sk-ant-api03-anthropic-secret-0005",
		"SLACK_SIGNING_SECRET":    "signing-secret-0006",
		"WEB_TOKEN":               "web-token-of-the-bot-0007-0123456789abcdef",
		"TELEGRAM_WEBHOOK_SECRET": "webhook-secret-0008",
		"NATS_PASSWORD":           "nats-password-0009",
	}
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_env", Name: "Bash", Input: map[string]any{"command": envProbe}}},
		plugintest.Reply{Text: []string{"Done, nothing secret here."}})
	fake := slacktest.New(t)
	tg := telegramtest.New(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	// Without the sandbox, which hides the bot from the CLI altogether
	// (plugintest's Sandboxed): what keeps the bot's secrets its own even
	// then.
	env := f.binEnv("SANDBOX=off", "STATE_FILE=off", "WARM_TTL=0", "AUDIT_LOG="+audit, "HEALTH_ADDR=127.0.0.1:0",
		"SLACK_API_URL="+fake.URL, "SLACK_ALLOWED_USERS=UALICE", "TELEGRAM_API_ENDPOINT="+tg.Endpoint(),
		"DISCORD_API_URL="+dc.URL, "CLAUDE_ARGS=--allowedTools Bash", "WEB_ADDR=127.0.0.1:0")
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	b := startBinary(t, f.workdir, env)
	fake.WaitConnected(t)
	fake.SlashCommand(t, "UALICE", "CGENERAL", "/claude", "start")
	var thread string
	fake.WaitFor(t, "the thread", func() bool {
		top := fake.Replies("CGENERAL", "")
		if len(top) > 0 {
			thread = top[0].TS
		}
		return thread != ""
	})
	waitSlack := func(want string) {
		fake.WaitFor(t, "a reply with "+want, func() bool {
			for _, m := range fake.Replies("CGENERAL", thread) {
				if strings.Contains(m.Text, want) {
					return true
				}
			}
			return false
		})
	}
	waitSlack("conversation started")
	fake.Post(t, "UALICE", "CGENERAL", thread, "hello")
	waitSlack("Done, nothing secret here.\n\n_— ")

	addr := regexp.MustCompile(`msg="health and metrics" addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(b.stderr.String())
	if addr == nil {
		t.Fatalf("no health address logged:\n%s", b.stderr.String())
	}
	get := func(path string) string {
		resp, err := http.Get("http://" + addr[1] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s\n%s", path, resp.Status, body)
		}
		return string(body)
	}
	// Discord registers its commands once READY: it is connected then.
	dc.WaitFor("discord's slash commands", func() bool { return len(dc.Commands()) > 0 })
	health := get("/healthz")
	if !strings.Contains(health, `"discord":"ok"`) || !strings.Contains(health, `"slack":"ok"`) || !strings.Contains(health, `"telegram":"ok"`) || !strings.Contains(health, `"status":"ok"`) {
		t.Errorf("/healthz = %s", health)
	}
	metrics := get("/metrics")
	for _, want := range []string{`jakebot_turns_total{outcome="ok",plugin="claude"} 1`, `jakebot_turn_duration_seconds_count{plugin="claude"} 1`,
		`jakebot_conversations_active 1`, `jakebot_cli_processes_running 0`, `jakebot_messages_sent_total{platform="slack"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	b.signal(syscall.SIGTERM)
	if code := b.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	auditData, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var chat strings.Builder
	for _, m := range fake.Replies("CGENERAL", thread) {
		chat.WriteString(m.Text + "\n")
	}
	// Whatever the CLI sent the model after running the tool: its output.
	var sent strings.Builder
	for _, r := range f.model.Requests() {
		sent.WriteString(r.Text() + "\n")
	}
	toolResult := sent.String()
	// The CLI has what it needs, its API key among it, and printed it:
	// the chat shows it blanked out. It found the bot, and could neither
	// read its environment nor open its memory.
	// Whole lines: the request also carries the command, which names them.
	for _, want := range []string{"key=" + secrets["ANTHROPIC_API_KEY"], "PATH=.*", "probe-end",
		fmt.Sprintf("bot-pid=%d", b.cmd.Process.Pid), "bot-environ=denied", "bot-mem=denied"} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(toolResult) {
			t.Errorf("the tool's output lacks the line %q:\n%s\nchat:\n%s", want, core.Shorten(toolResult, 300), chat.String())
		}
	}
	// Every environment the tool could read, in full: its own among them.
	environs, err := os.ReadFile(filepath.Join(f.workdir, "environs.txt"))
	if err != nil || !strings.Contains(string(environs), "ANTHROPIC_API_KEY="+secrets["ANTHROPIC_API_KEY"]) {
		t.Errorf("the dump of every readable /proc/*/environ lacks the CLI's own (%v)", err)
	}
	if !strings.Contains(chat.String(), "key=[REDACTED]") {
		t.Errorf("the chat does not show the printed key blanked out:\n%s", chat.String())
	}
	// The web page's sign-in link holds WEB_TOKEN: stderr here is a pipe,
	// as under systemd or Docker, where it is the log, so the link is not
	// printed; the log says how to get it (TestWebSignInURLOnlyOnATerminal).
	logs := b.stderr.String()
	if !strings.Contains(logs, "`jakebot web-url` prints it") {
		t.Errorf("stderr does not say how to get the web's sign-in URL")
	}
	outputs := map[string]string{"stdout": b.all.String(), "stderr": logs, "audit log": string(auditData), "metrics": metrics, "health": health,
		"slack": chat.String()}
	for name, secret := range secrets {
		if name == "ANTHROPIC_API_KEY" {
			continue // the CLI's own
		}
		if strings.Contains(toolResult, secret) {
			t.Errorf("the CLI's tool printed the value of %s", name)
		}
		if strings.Contains(string(environs), secret) {
			t.Errorf("the CLI's tool read the value of %s in a process's environment", name)
		}
	}
	if !strings.Contains(b.stderr.String(), "no sandbox (SANDBOX=off, or neither bwrap nor Landlock works here): every agent can read and write whatever jakebot's user can") {
		t.Errorf("start-up does not warn that SANDBOX=off leaves everything open:\n%s", b.stderr.String())
	}
	if !strings.Contains(b.stderr.String(), "telegram serves nobody: no allowed users. Set TELEGRAM_ALLOWED_USERS") {
		t.Errorf("no start-up line says Telegram serves nobody:\n%s", b.stderr.String())
	}
	for where, text := range outputs {
		for name, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains the value of %s", where, name)
			}
		}
	}

	var kinds []string
	var turn map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(auditData)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		kinds = append(kinds, rec["kind"].(string))
		if rec["kind"] == "turn" {
			turn = rec
		}
	}
	if strings.Join(kinds, ",") != "command,turn" {
		t.Errorf("audit kinds %v, want command,turn", kinds)
	}
	if turn == nil || turn["plugin"] != "claude" || turn["outcome"] != "ok" || turn["workdir"] != f.workdir || turn["platform"] != "slack" ||
		!sessionRE.MatchString(turn["resume_token"].(string)) || turn["id"] == "" || turn["text"] != nil {
		t.Errorf("audit turn record %v", turn)
	}
	if !strings.Contains(b.stderr.String(), "id="+turn["id"].(string)) {
		t.Errorf("the turn's correlation id %v is not in the logs", turn["id"])
	}
}

// dotenvCLI is how one built-in CLI is run with its API key and its home
// set only in .env.
type dotenvCLI struct {
	id, name string
	// setup starts the CLI's fake model and returns the .env lines (the
	// key and the home, home being where the CLI keeps its state), the
	// bot's environment without them, and the recorded requests.
	setup func(t *testing.T, f *fixture, home string) (dotenv, env []string, requests func() []plugintest.Request)
	// sent reports whether a request carried key.
	sent func(r plugintest.Request, key string) bool
	// sessions is where, under home, the CLI writes its session files.
	sessions string
}

var dotenvCLIs = []dotenvCLI{
	{"claude", "Claude Code", func(t *testing.T, f *fixture, home string) ([]string, []string, func() []plugintest.Request) {
		return []string{"ANTHROPIC_API_KEY=sk-ant-only-in-dotenv", "CLAUDE_CONFIG_DIR=" + home},
			[]string{"CLAUDE_BIN=" + plugintest.CLIPath(t, "claude")}, f.model.Requests
	}, func(r plugintest.Request, key string) bool { return r.Header.Get("X-Api-Key") == key }, "projects/*/*.jsonl"},

	{"codex", "Codex", func(t *testing.T, f *fixture, home string) ([]string, []string, func() []plugintest.Request) {
		o := plugintest.NewOpenAI(t, plugintest.Reply{Text: []string{"Configured by .env."}})
		// The fake provider takes its key from OPENAI_API_KEY, as
		// OpenAI's own does.
		provider := fmt.Sprintf(`model_providers.fake={name="fake",base_url=%q,wire_api="responses",env_key="OPENAI_API_KEY",request_max_retries=0,stream_max_retries=0}`, o.URL)
		env := []string{"CODEX_BIN=" + plugintest.CLIPath(t, "codex"), "CODEX_MODEL=gpt-5.5",
			"CODEX_ARGS=-c '" + provider + "' -c model_provider=fake"}
		for _, kv := range plugintest.CodexEnv(t, f.home) {
			if !strings.HasPrefix(kv, "OPENAI_API_KEY=") && !strings.HasPrefix(kv, "CODEX_HOME=") {
				env = append(env, kv)
			}
		}
		return []string{"OPENAI_API_KEY=sk-only-in-dotenv", "CODEX_HOME=" + home}, env, o.Requests
	}, func(r plugintest.Request, key string) bool { return r.Header.Get("Authorization") == "Bearer "+key }, "sessions/*/*/*/rollout-*.jsonl"},

	{"gemini", "Gemini CLI", func(t *testing.T, f *fixture, home string) ([]string, []string, func() []plugintest.Request) {
		g := plugintest.NewGemini(t, plugintest.Reply{Text: []string{"Configured by .env."}})
		env := []string{"GEMINI_BIN=" + plugintest.CLIPath(t, "gemini"), "GEMINI_MODEL=gemini-2.5-flash"}
		// Its settings (API-key auth) go in the .env home; HOME stays.
		for _, kv := range plugintest.GeminiEnv(t, g, home) {
			if !strings.HasPrefix(kv, "GEMINI_API_KEY=") && !strings.HasPrefix(kv, "HOME=") {
				env = append(env, kv)
			}
		}
		return []string{"GEMINI_API_KEY=gemini-key-only-in-dotenv", "GEMINI_CLI_HOME=" + home}, env, g.Requests
	}, func(r plugintest.Request, key string) bool { return r.Header.Get("X-Goog-Api-Key") == key }, ".gemini/tmp/*/chats/session-*.json*"},
}

// Variables set only in .env reach each CLI: its API key and where it
// keeps its history, which is also where the bot lists it from.
func TestDotenvReachesEachCLI(t *testing.T) {
	t.Parallel()
	for _, cli := range dotenvCLIs {
		t.Run(cli.id, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, plugintest.Reply{Text: []string{"Configured by .env."}})
			home := filepath.Join(t.TempDir(), cli.id+"-home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			dotenv, extra, requests := cli.setup(t, f, home)
			// .env sits where jakebot starts, outside the root: Gemini CLI
			// would read one in its workdir (or above) by itself.
			botDir := t.TempDir()
			if err := os.WriteFile(filepath.Join(botDir, ".env"), []byte(strings.Join(dotenv, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			key, _ := strings.CutPrefix(dotenv[0], strings.SplitN(dotenv[0], "=", 2)[0]+"=")
			homeVar := strings.SplitN(dotenv[1], "=", 2)[0]
			var env []string
			for _, kv := range f.env {
				name, _, _ := strings.Cut(kv, "=")
				if !core.SecretName(name) && name != homeVar {
					env = append(env, kv)
				}
			}
			cmd := exec.Command(buildJakebot(t))
			cmd.Dir = botDir
			cmd.Env = append(append(env, extra...), "ALLOWED_ROOTS="+f.workdir, "DEFAULT_WORKDIR="+f.workdir, "STATE_FILE=off", "WARM_TTL=0")
			cmd.Stdin = strings.NewReader("/" + cli.id + " start\nhello\n/" + cli.id + " conversations\n")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("jakebot: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "Configured by .env.") || !regexp.MustCompile(cli.name+` conversations in .*\n1\. [0-9a-f]{8}`).Match(out) {
				t.Errorf("no answer, or the turn is not listed from .env's %s:\n%s", homeVar, out)
			}
			reqs := requests()
			if len(reqs) == 0 || !slices.ContainsFunc(reqs, func(r plugintest.Request) bool { return cli.sent(r, key) }) {
				t.Fatalf("the model was not called with .env's API key")
			}
			if sessions, _ := filepath.Glob(filepath.Join(home, cli.sessions)); len(sessions) == 0 {
				t.Errorf("no session in .env's %s", homeVar)
			}
		})
	}
}

// A .env holding the bot's tokens inside an allowed root, where any agent
// could read it, stops jakebot before it serves anyone.
func TestTokensInsideARootRefuseToStart(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("TELEGRAM_TOKEN=123456:secret-in-the-workdir\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(buildJakebot(t))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "STATE_FILE=off"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), ".env, which sets TELEGRAM_TOKEN") || !strings.Contains(string(out), "inside the allowed roots") {
		t.Fatalf("jakebot started (%v), or did not say why not:\n%s", err, out)
	}
	if strings.Contains(string(out), "secret-in-the-workdir") {
		t.Errorf("the refusal shows the token:\n%s", out)
	}
}

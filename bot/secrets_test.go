package bot_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// envProbe is a shell command that prints the model API key, its own
// environment, and every platform token it can find in any process's
// environment (by name, as an agent would look: a dump of every
// /proc/*/environ is so long that the CLI keeps it out of the turn).
const envProbe = `echo "key=$ANTHROPIC_API_KEY"; env; echo proc-start; grep -a -o -h -E '(DISCORD_TOKEN|SLACK_BOT_TOKEN|SLACK_APP_TOKEN|SLACK_SIGNING_SECRET|TELEGRAM_TOKEN)=[^[:cntrl:]]*' /proc/[0-9]*/environ 2>/dev/null; echo probe-end`

// Known secret values in the environment never reach a log line, the
// audit log, the metrics, a chat or a CLI (which is asked to print every
// environment it can read); and the audit log and health endpoints say
// what they should.
func TestSecretsNeverReachTheOutput(t *testing.T) {
	t.Parallel()
	// The platforms' tokens are their fakes', which check them; the
	// others are made up.
	dc := platformtest.NewDiscord(t) // Discord and Telegram run too, serving nobody
	secrets := map[string]string{
		"SLACK_BOT_TOKEN":      platformtest.SlackBotToken,
		"SLACK_APP_TOKEN":      platformtest.SlackAppToken,
		"DISCORD_TOKEN":        dc.Token,
		"TELEGRAM_TOKEN":       platformtest.TelegramToken,
		"ANTHROPIC_API_KEY":    "sk-ant-api03-anthropic-secret-0005",
		"SLACK_SIGNING_SECRET": "signing-secret-0006",
	}
	f := newFixture(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_env", Name: "Bash", Input: map[string]any{"command": envProbe}}},
		plugintest.Reply{Text: []string{"Done, nothing secret here."}})
	fake := platformtest.NewSlack(t)
	tg := platformtest.NewTelegramServer(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	env := f.binEnv("STATE_FILE=off", "WARM_TTL=0", "AUDIT_LOG="+audit, "HEALTH_ADDR=127.0.0.1:0",
		"SLACK_API_URL="+fake.URL, "SLACK_ALLOWED_USERS=UALICE", "TELEGRAM_API_ENDPOINT="+tg.Endpoint(),
		"DISCORD_API_URL="+dc.URL, "CLAUDE_ARGS=--allowedTools Bash")
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
	// the chat shows it blanked out.
	for _, want := range []string{"key=" + secrets["ANTHROPIC_API_KEY"], "PATH=", "probe-end"} {
		if !strings.Contains(toolResult, want) {
			t.Errorf("the tool's output lacks %q:\n%s\nchat:\n%s", want, core.Shorten(toolResult, 300), chat.String())
		}
	}
	if !strings.Contains(chat.String(), "key=[REDACTED]") {
		t.Errorf("the chat does not show the printed key blanked out:\n%s", chat.String())
	}
	outputs := map[string]string{"stdout": b.all.String(), "stderr": b.stderr.String(), "audit log": string(auditData), "metrics": metrics, "health": health,
		"slack": chat.String()}
	withheldFromCLI := []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_TOKEN", "TELEGRAM_TOKEN", "SLACK_SIGNING_SECRET"}
	for _, name := range withheldFromCLI {
		if strings.Contains(toolResult, secrets[name]) {
			i := strings.Index(toolResult, secrets[name])
			where := "its own environment"
			if i > strings.Index(toolResult, "proc-start") {
				where = "another process's environment"
			}
			t.Errorf("the CLI read the value of %s in %s", name, where)
		}
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

// Variables set only in .env reach the CLI: its API key and where it keeps
// its history, which is also where the bot lists it from.
func TestDotenvReachesTheCLI(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"Configured by .env."}})
	configDir := filepath.Join(t.TempDir(), "claude-config")
	dotenv := "ANTHROPIC_API_KEY=sk-ant-only-in-dotenv\nCLAUDE_CONFIG_DIR=" + configDir + "\n"
	if err := os.WriteFile(filepath.Join(f.workdir, ".env"), []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range f.env {
		if !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(buildJakebot(t))
	cmd.Dir = f.workdir
	cmd.Env = append(env, "CLAUDE_BIN="+plugintest.CLIPath(t, "claude"), "ALLOWED_ROOTS="+f.workdir, "STATE_FILE=off")
	cmd.Stdin = strings.NewReader("/claude start\nhello\n/claude conversations\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("jakebot: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Configured by .env.") || !regexp.MustCompile(`conversations in .*\n1\. [0-9a-f]{8} .*hello`).Match(out) {
		t.Errorf("no answer, or the turn is not listed from .env's CLAUDE_CONFIG_DIR:\n%s", out)
	}
	reqs := f.model.Requests()
	if len(reqs) == 0 || reqs[0].Header.Get("X-Api-Key") != "sk-ant-only-in-dotenv" {
		t.Fatalf("the model was not called with .env's API key")
	}
	if sessions, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", "*.jsonl")); len(sessions) != 1 {
		t.Errorf("sessions in .env's CLAUDE_CONFIG_DIR: %v, want one", sessions)
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

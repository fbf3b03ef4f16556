package bot_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Known secret values in the environment never reach a log line, the
// audit log, the metrics or the console; and the audit log and health
// endpoints say what they should.
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
	f := newFixture(t, plugintest.Reply{Text: []string{"Done, nothing secret here."}})
	fake := platformtest.NewSlack(t)
	tg := platformtest.NewTelegramServer(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	env := f.binEnv("STATE_FILE=off", "AUDIT_LOG="+audit, "HEALTH_ADDR=127.0.0.1:0",
		"SLACK_API_URL="+fake.URL, "SLACK_ALLOWED_USERS=UALICE", "TELEGRAM_API_ENDPOINT="+tg.Endpoint(),
		"DISCORD_API_URL="+dc.URL)
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
	outputs := map[string]string{"stdout": b.all.String(), "stderr": b.stderr.String(), "audit log": string(auditData), "metrics": metrics, "health": health}
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

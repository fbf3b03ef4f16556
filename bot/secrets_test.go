package bot_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Known secret values in the environment never reach a log line, the
// audit log, the metrics or the console; and the audit log and health
// endpoints say what they should.
func TestSecretsNeverReachTheOutput(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"DISCORD_TOKEN":        "MTA5ODc2NTQzMjEw.discord-secret-0001",
		"SLACK_BOT_TOKEN":      "xoxb-1111-2222-slack-secret-0002",
		"SLACK_APP_TOKEN":      "xapp-1-A111-slack-app-secret-0003",
		"TELEGRAM_TOKEN":       "123456:telegram-secret-0004",
		"ANTHROPIC_API_KEY":    "sk-ant-api03-anthropic-secret-0005",
		"SLACK_SIGNING_SECRET": "signing-secret-0006",
	}
	f := newFixture(t, plugintest.Reply{Text: []string{"Done, nothing secret here."}})
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	env := f.binEnv("STATE_FILE=off", "AUDIT_LOG="+audit, "HEALTH_ADDR=127.0.0.1:0")
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	b := startBinary(t, f.workdir, env)
	b.say("/claude start", "hello")
	b.expect(`started in`)
	b.expect(`Done, nothing secret here\.`)
	b.say("/status")
	b.expect(`Session: `)

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
	health := get("/healthz")
	if !strings.Contains(health, `"console":"ok"`) || !strings.Contains(health, `"status":"ok"`) {
		t.Errorf("/healthz = %s", health)
	}
	metrics := get("/metrics")
	for _, want := range []string{`jakebot_turns_total{outcome="ok",plugin="claude"} 1`, `jakebot_turn_duration_seconds_count{plugin="claude"} 1`,
		`jakebot_conversations_active 1`, `jakebot_cli_processes_running 0`, `jakebot_messages_sent_total{platform="console"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	b.in.Close()
	if code := b.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	auditData, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{"stdout": b.all.String(), "stderr": b.stderr.String(), "audit log": string(auditData), "metrics": metrics, "health": health}
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
	if strings.Join(kinds, ",") != "command,turn,command" {
		t.Errorf("audit kinds %v, want command,turn,command", kinds)
	}
	if turn == nil || turn["plugin"] != "claude" || turn["outcome"] != "ok" || turn["workdir"] != f.workdir || turn["platform"] != "console" ||
		!sessionRE.MatchString(turn["resume_token"].(string)) || turn["id"] == "" || turn["text"] != nil {
		t.Errorf("audit turn record %v", turn)
	}
	if !strings.Contains(b.stderr.String(), "id="+turn["id"].(string)) {
		t.Errorf("the turn's correlation id %v is not in the logs", turn["id"])
	}
}

package bot

import (
	"bytes"
	"log/slog"
	"testing"
)

func TestRedactorBlanksSecretsInLogs(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"DISCORD_TOKEN": "discord-secret-value", "ANTHROPIC_API_KEY": "sk-ant-xyz-123",
		"SLACK_SIGNING_SECRET": "s1gn1ng", "LOG_LEVEL": "debug-level-not-secret", "TELEGRAM_TOKEN": "short",
	}
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(newRedactor(&buf, secretValues(vars)), nil))
	logger.Info("connecting", "token", "discord-secret-value", "url", "https://x/?key=sk-ant-xyz-123", "signing", "s1gn1ng")
	logger.Info("level", "v", "debug-level-not-secret", "short", "short")
	got := buf.String()
	for _, secret := range []string{"discord-secret-value", "sk-ant-xyz-123", "s1gn1ng"} {
		if bytes.Contains(buf.Bytes(), []byte(secret)) {
			t.Errorf("log contains %q: %s", secret, got)
		}
	}
	if n := bytes.Count(buf.Bytes(), []byte("[REDACTED]")); n != 3 {
		t.Errorf("%d redactions, want 3: %s", n, got)
	}
	if !bytes.Contains(buf.Bytes(), []byte("debug-level-not-secret")) || !bytes.Contains(buf.Bytes(), []byte("short=short")) {
		t.Errorf("non-secrets (or too-short values) were blanked: %s", got)
	}
}

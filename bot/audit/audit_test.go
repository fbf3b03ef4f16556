package audit_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/bot/audit"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

var turn = core.Record{
	Kind: core.RecordTurn, ID: "c0ffee", Time: coretest.Epoch,
	Key:    core.ConversationKey{Platform: "slack", Channel: "C1", Thread: "171.2"},
	Author: "U7", Plugin: "claude", Workdir: "/srv/p", SessionID: "sess-1",
	Duration: 1500 * time.Millisecond, Outcome: core.OutcomeOK, CostUSD: 0.02, Text: "delete the tests",
}

func TestRecordLines(t *testing.T) {
	t.Parallel()
	for _, withText := range []bool{false, true} {
		var buf bytes.Buffer
		l := audit.New(&buf, withText, nil)
		l.Record(turn)
		l.Record(core.Record{Kind: core.RecordCommand, ID: "beef", Time: coretest.Epoch, Key: core.ConversationKey{Platform: "console", User: "local"},
			Author: "local", Command: "/status", Outcome: core.OutcomeOK, Text: "/status"})
		lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
		if len(lines) != 2 {
			t.Fatalf("%d lines, want 2", len(lines))
		}
		var got map[string]any
		if err := json.Unmarshal(lines[0], &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"time": "2026-01-02T03:04:05Z", "id": "c0ffee", "kind": "turn", "platform": "slack", "author": "U7",
			"channel": "C1", "thread": "171.2", "plugin": "claude", "workdir": "/srv/p", "resume_token": "sess-1",
			"duration_ms": 1500.0, "outcome": "ok", "cost_usd": 0.02,
		}
		if withText {
			want["text"] = "delete the tests"
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("withText=%v: turn line (-want +got):\n%s", withText, diff)
		}
	}
}

// A message that quotes a secret is audited with the secret blanked out.
func TestRecordRedactsSecrets(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := audit.New(&buf, true, core.NewRedactor([]string{"xoxb-secret-token"}))
	r := turn
	r.Text, r.Command = "why does xoxb-secret-token fail?", "/workdir set /srv/xoxb-secret-token"
	l.Record(r)
	if got := buf.String(); strings.Contains(got, "xoxb-secret-token") || strings.Count(got, core.Redacted) != 2 {
		t.Errorf("audit line %s shows the secret, or not blanked twice", got)
	}
}

func TestOpenAppendsPrivately(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for range 2 {
		l, err := audit.Open(path, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		l.Record(turn)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	if n := bytes.Count(data, []byte("\n")); n != 2 {
		t.Fatalf("%d lines after two runs, want 2 (appended)", n)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode())
	}
}

package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// captured is the rollout the real CLI wrote for testdata/codex/resume:
// two turns in /workdir, the first prompt "remember the number 42".
func captured(t testing.TB) (path string, data []byte) {
	t.Helper()
	files, err := filepath.Glob("../../testdata/codex/history/.codex/sessions/*/*/*/rollout-*.jsonl")
	if err != nil || len(files) != 1 {
		t.Fatalf("want one recorded rollout, found %v (%v)", files, err)
	}
	data, err = os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return files[0], data
}

func TestConversationsFromRecordedHistory(t *testing.T) {
	t.Parallel()
	path, _ := captured(t)
	name := filepath.Base(path)
	id := name[len(name)-len("01a200b0-3296-7430-8763-ca3edd6c3b57.jsonl") : len(name)-len(".jsonl")]
	p := codex.New(codex.Config{Home: "../../testdata/codex/history/.codex"}, nil)
	infos, err := p.Conversations(context.Background(), plugintest.RecordedWorkdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].SessionID != id || infos[0].Title != "remember the number 42" {
		t.Errorf("Conversations = %+v, want %s titled by its first prompt", infos, id)
	}
	for _, dir := range []string{"/elsewhere", "/workdir/sub", "/"} {
		if infos, err := p.Conversations(context.Background(), dir); err != nil || len(infos) != 0 {
			t.Errorf("Conversations(%q) = %+v, %v; want none", dir, infos, err)
		}
	}
}

// session makes a rollout from the recorded one with another id, cwd and
// first prompt, and pads the context before the prompt by pad bytes.
func session(t testing.TB, template []byte, id, cwd, prompt string, pad int) []byte {
	t.Helper()
	var meta struct {
		Payload struct {
			ID string `json:"id"`
		} `json:"payload"`
	}
	first, _, _ := bytes.Cut(template, []byte("\n"))
	if err := json.Unmarshal(first, &meta); err != nil || meta.Payload.ID == "" {
		t.Fatalf("the recorded rollout starts with no session id: %.200s", first)
	}
	out := bytes.ReplaceAll(template, []byte(meta.Payload.ID), []byte(id))
	out = bytes.ReplaceAll(out, []byte(`"`+plugintest.RecordedWorkdir), []byte(`"`+cwd))
	out = bytes.ReplaceAll(out, []byte("remember the number 42"), []byte(prompt))
	if pad > 0 {
		first, rest, _ := bytes.Cut(out, []byte("\n"))
		filler := fmt.Sprintf(`{"timestamp":"2026-11-22T00:37:57.000Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"%s"}]}}`, bytes.Repeat([]byte("x"), pad))
		out = append(append(append(first, '\n'), filler+"\n"...), rest...)
	}
	return out
}

// writeSession writes a rollout into home's sessions tree with the given
// modification time.
func writeSession(t testing.TB, home string, i int, data []byte, mtime time.Time) {
	t.Helper()
	dir := filepath.Join(home, "sessions", "2026", "11", fmt.Sprintf("%02d", 1+i%28))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("rollout-2026-11-22T00-00-%02d-%s.jsonl", i%60, sessionID(i)))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func sessionID(i int) string { return fmt.Sprintf("01a200b0-0000-7000-8000-%012d", i) }

func TestConversationsNewestFirst(t *testing.T) {
	t.Parallel()
	_, template := captured(t)
	home := t.TempDir()
	base := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	writeSession(t, home, 1, session(t, template, sessionID(1), "/work/a", "older", 0), base)
	writeSession(t, home, 2, session(t, template, sessionID(2), "/work/a", "newest, with a long context", 300<<10), base.Add(2*time.Hour))
	writeSession(t, home, 3, session(t, template, sessionID(3), "/work/b", "another workdir", 0), base.Add(time.Hour))
	writeSession(t, home, 4, []byte("not a rollout\n"), base.Add(3*time.Hour))
	writeSession(t, home, 5, session(t, template, sessionID(5), "/work/a", "prompt beyond the head", 0)[:30<<10], base.Add(time.Minute))
	p := codex.New(codex.Config{Home: home}, nil)
	infos, err := p.Conversations(context.Background(), "/work/a/")
	if err != nil {
		t.Fatal(err)
	}
	want := []core.ConversationInfo{
		// The prompt lies beyond the head that is read, or was cut off:
		// listed, without a title.
		{SessionID: sessionID(2), Title: "", Updated: base.Add(2 * time.Hour)},
		{SessionID: sessionID(5), Title: "", Updated: base.Add(time.Minute)},
		{SessionID: sessionID(1), Title: "older", Updated: base},
	}
	if len(infos) != len(want) {
		t.Fatalf("Conversations = %+v, want %+v", infos, want)
	}
	for i := range want {
		if infos[i].SessionID != want[i].SessionID || infos[i].Title != want[i].Title || !infos[i].Updated.Equal(want[i].Updated) {
			t.Errorf("Conversations[%d] = %+v, want %+v", i, infos[i], want[i])
		}
	}
}

// BenchmarkConversations5000 lists a workdir with 5,000 recorded sessions,
// each a copy of a real rollout (about 50 KB).
func BenchmarkConversations5000(b *testing.B) {
	_, template := captured(b)
	home := b.TempDir()
	base := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i := range 5000 {
		writeSession(b, home, i, session(b, template, sessionID(i), "/work/a", fmt.Sprintf("prompt %d", i), 0), base.Add(time.Duration(i)*time.Second))
	}
	plugintest.BenchConversations(b, codex.New(codex.Config{Home: home}, nil), "/work/a", 5000)
}

package gemini_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/plugins/gemini"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

const recordedHome = "../../testdata/gemini/history"

// recorded is the chat file the real CLI wrote for testdata/gemini/resume:
// two turns in /workdir, the first prompt "remember the number 42".
func recorded(t testing.TB) (id string, data []byte) {
	t.Helper()
	files, err := filepath.Glob(recordedHome + "/.gemini/tmp/*/chats/session-*.jsonl")
	if err != nil || len(files) != 1 {
		t.Fatalf("want one recorded chat, found %v (%v)", files, err)
	}
	data, err = os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	id = string(bytes.Split(bytes.Split(data, []byte(`"sessionId":"`))[1], []byte(`"`))[0])
	return id, data
}

func TestConversationsFromRecordedHistory(t *testing.T) {
	t.Parallel()
	id, _ := recorded(t)
	p := gemini.New(gemini.Config{Home: recordedHome}, nil)
	infos, err := p.Conversations(context.Background(), plugintest.RecordedWorkdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].SessionID != id || infos[0].Title != "remember the number 42" {
		t.Errorf("Conversations = %+v, want %s titled by its first prompt", infos, id)
	}
	for _, dir := range []string{"/elsewhere", "/workdir/sub"} {
		if infos, err := p.Conversations(context.Background(), dir); err != nil || len(infos) != 0 {
			t.Errorf("Conversations(%q) = %+v, %v; want none", dir, infos, err)
		}
	}
}

// chat makes a chat file from the recorded one with another id, first
// prompt and kind.
func chat(template []byte, recordedID, id, prompt, kind string) []byte {
	out := bytes.ReplaceAll(template, []byte(recordedID), []byte(id))
	out = bytes.ReplaceAll(out, []byte("remember the number 42"), []byte(prompt))
	return bytes.Replace(out, []byte(`"kind":"main"`), []byte(`"kind":"`+kind+`"`), 1)
}

func sessionID(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", i) }

// writeChat writes a chat file into project's chats folder with the given
// modification time.
func writeChat(t testing.TB, project, name string, data []byte, mtime time.Time) {
	t.Helper()
	dir := filepath.Join(project, "chats")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConversationsNewestFirst(t *testing.T) {
	t.Parallel()
	rid, template := recorded(t)
	home := t.TempDir()
	tmp := filepath.Join(home, ".gemini", "tmp")
	writeFile(t, filepath.Join(home, ".gemini", "projects.json"), `{"projects":{"/work/a":"a","/work/b":"b"}}`)
	writeFile(t, filepath.Join(tmp, "a", ".project_root"), "/work/a\n")
	writeFile(t, filepath.Join(tmp, "b", ".project_root"), "/work/b")
	base := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	a := filepath.Join(tmp, "a")
	writeChat(t, a, "session-1.jsonl", chat(template, rid, sessionID(1), "older", "main"), base)
	writeChat(t, a, "session-2.jsonl", chat(template, rid, sessionID(2), "newest", "main"), base.Add(2*time.Hour))
	writeChat(t, a, "session-3.jsonl", chat(template, rid, sessionID(3), "a subagent", "subagent"), base.Add(3*time.Hour))
	// A resumed legacy session can leave a second file with the same id.
	writeChat(t, a, "session-4a.jsonl", chat(template, rid, sessionID(4), "resumed", "main"), base.Add(time.Minute))
	writeChat(t, a, "session-4b.jsonl", chat(template, rid, sessionID(4), "resumed", "main"), base.Add(time.Hour))
	writeChat(t, a, "session-5.json", []byte(`{"sessionId":"`+sessionID(5)+`","messages":[{"type":"user","content":[{"text":"<session_context>x"}]},{"type":"user","content":"legacy prompt"}]}`), base.Add(30*time.Minute))
	writeChat(t, a, "session-6.jsonl", []byte("garbage\n"), base.Add(4*time.Hour))
	writeChat(t, filepath.Join(tmp, "b"), "session-7.jsonl", chat(template, rid, sessionID(7), "other workdir", "main"), base.Add(5*time.Hour))
	// Before v0.29 the folder was named by the path's sha256.
	sum := sha256.Sum256([]byte("/work/a"))
	writeChat(t, filepath.Join(tmp, hex.EncodeToString(sum[:])), "session-8.jsonl", chat(template, rid, sessionID(8), "from the hashed folder", "main"), base.Add(-time.Hour))

	p := gemini.New(gemini.Config{Home: home}, nil)
	infos, err := p.Conversations(context.Background(), "/work/a")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id, title string
		updated   time.Time
	}{
		{sessionID(2), "newest", base.Add(2 * time.Hour)},
		{sessionID(4), "resumed", base.Add(time.Hour)},
		{sessionID(5), "legacy prompt", base.Add(30 * time.Minute)},
		{sessionID(1), "older", base},
		{sessionID(8), "from the hashed folder", base.Add(-time.Hour)},
	}
	if len(infos) != len(want) {
		t.Fatalf("Conversations = %+v, want %+v", infos, want)
	}
	for i, w := range want {
		if infos[i].SessionID != w.id || infos[i].Title != w.title || !infos[i].Updated.Equal(w.updated) {
			t.Errorf("Conversations[%d] = %+v, want %+v", i, infos[i], w)
		}
	}

	// Without the registry, the .project_root markers find the folder.
	if err := os.Remove(filepath.Join(home, ".gemini", "projects.json")); err != nil {
		t.Fatal(err)
	}
	infos, err = p.Conversations(context.Background(), "/work/b")
	if err != nil || len(infos) != 1 || infos[0].SessionID != sessionID(7) {
		t.Errorf("Conversations without projects.json = %+v, %v; want %s", infos, err, sessionID(7))
	}
}

// BenchmarkConversations5000 lists a workdir with 5,000 recorded sessions,
// each a copy of a real chat file.
func BenchmarkConversations5000(b *testing.B) {
	rid, template := recorded(b)
	home := b.TempDir()
	writeFile(b, filepath.Join(home, ".gemini", "projects.json"), `{"projects":{"/work/a":"a"}}`)
	project := filepath.Join(home, ".gemini", "tmp", "a")
	writeFile(b, filepath.Join(project, ".project_root"), "/work/a")
	base := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i := range 5000 {
		writeChat(b, project, fmt.Sprintf("session-2026-11-22T00-00-%08d.jsonl", i),
			chat(template, rid, sessionID(i), fmt.Sprintf("prompt %d", i), "main"), base.Add(time.Duration(i)*time.Second))
	}
	plugintest.BenchConversations(b, gemini.New(gemini.Config{Home: home}, nil), "/work/a", 5000)
}

func TestStateDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfgHome string
		env     map[string]string
		want    string // "" wants an error
	}{
		{"user's home", "", map[string]string{"HOME": "/home/u"}, "/home/u/.gemini"},
		{"GEMINI_CLI_HOME", "", map[string]string{"HOME": "/home/u", "GEMINI_CLI_HOME": "/srv/g"}, "/srv/g/.gemini"},
		{"config wins over the environment", "/cfg", map[string]string{"GEMINI_CLI_HOME": "/srv/g"}, "/cfg/.gemini"},
		{"GEMINI_CLI_HOME needs no user's home", "", map[string]string{"GEMINI_CLI_HOME": "/srv/g"}, "/srv/g/.gemini"},
		{"no home at all", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := gemini.Config{Home: tt.cfgHome}.StateDir(func(k string) string { return tt.env[k] })
			if got != tt.want || (err != nil) != (tt.want == "") {
				t.Errorf("StateDir = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

package gemini

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// guardLoad moves a session's own chat file out of the name a load in
// this minute would append to, drops the files earlier loads left without
// history, and leaves everything else alone.
func TestGuardLoad(t *testing.T) {
	t.Parallel()
	const id = "0530f130-75a4-4404-8fda-2fde70ff96e7"
	now := time.Date(2026, 11, 25, 7, 58, 30, 0, time.UTC)
	history := `{"sessionId":"` + id + `","projectHash":"h","startTime":"2026-11-25T07:58:01Z"}` + "\n" +
		`{"id":"m1","type":"user","content":[{"text":"remember 42"}]}` + "\n"
	contextOnly := `{"sessionId":"` + id + `","projectHash":"h"}` + "\n" +
		`{"$set":{"messages":[{"id":"c","type":"user","content":[{"text":"<session_context>…"}]}]}}` + "\n"
	// Another session whose id starts alike.
	other := `{"sessionId":"` + id[:8] + `-0000-4000-8000-000000000000","projectHash":"h"}` + "\n" +
		`{"id":"m1","type":"user","content":[{"text":"something else"}]}` + "\n"
	for _, tc := range []struct {
		name  string
		files map[string]string // by minute
		ok    bool
		after map[string]string
	}{
		{"started this minute", map[string]string{"07-58": history}, true, map[string]string{"07-57": history}},
		{"started earlier", map[string]string{"07-51": history}, true, map[string]string{"07-51": history}},
		{"an earlier load's file", map[string]string{"07-51": history, "07-58": contextOnly}, true,
			map[string]string{"07-51": history}},
		{"a load's file in the way", map[string]string{"07-58": history, "07-57": contextOnly}, true,
			map[string]string{"07-57": history}},
		{"the minute before taken", map[string]string{"07-58": history, "07-57": other}, false,
			map[string]string{"07-58": history, "07-57": other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, workdir := t.TempDir(), t.TempDir()
			chats := chatsDir(t, home, workdir)
			name := func(minute string) string {
				return filepath.Join(chats, "session-2026-11-25T"+minute+"-"+id[:8]+".jsonl")
			}
			for minute, data := range tc.files {
				os.WriteFile(name(minute), []byte(data), 0o644)
			}
			clock := coretest.NewManualClock()
			clock.Advance(now.Sub(clock.Now()))
			p := New(Config{Home: home, Clock: clock}, nil)
			if ok := p.guardLoad(core.Turn{Workdir: workdir, SessionID: id}); ok != tc.ok {
				t.Errorf("guardLoad = %v, want %v", ok, tc.ok)
			}
			entries, _ := os.ReadDir(chats)
			if len(entries) != len(tc.after) {
				t.Errorf("%d files after, want %d", len(entries), len(tc.after))
			}
			for minute, want := range tc.after {
				if got, err := os.ReadFile(name(minute)); err != nil || string(got) != want {
					t.Errorf("file of %s = %q, %v; want %q", minute, got, err, want)
				}
			}
		})
	}
}

// chatsDir makes the folder in home where the CLI keeps workdir's chats.
func chatsDir(t *testing.T, home, workdir string) string {
	t.Helper()
	chats := filepath.Join(home, ".gemini", "tmp", "project", "chats")
	if err := os.MkdirAll(chats, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chats, "..", ".project_root"), []byte(workdir), 0o644); err != nil {
		t.Fatal(err)
	}
	return chats
}

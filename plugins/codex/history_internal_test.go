package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestSessionMeta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line, id, cwd string
	}{
		{"plain", `{"timestamp":"t","type":"session_meta","payload":{"id":"a","cwd":"/w","base_instructions":{"text":"x"}}}`, "a", "/w"},
		{"cut after cwd", `{"type":"session_meta","payload":{"id":"a","cwd":"/w","base_instructions":{"text":"xx`, "a", "/w"},
		{"escapes", `{"type":"session_meta","payload":{"x":"a \"}\\\\","id":"a\u0041","nested":{"cwd":"/no"},"cwd":"/w \"q\""}}`, "aA", `/w "q"`},
		{"spaces", `{ "type" : "session_meta" , "payload" : { "id" : "a" , "cwd" : "/w" } }`, "a", "/w"},
		{"other type", `{"type":"turn_context","payload":{"id":"a","cwd":"/w"}}`, "", ""},
		{"no cwd", `{"type":"session_meta","payload":{"id":"a"}}`, "", ""},
		{"not json", `session_meta`, "", ""},
		{"cut in a key", `{"type":"session_meta","payload":{"id":"a","cw`, "", ""},
	} {
		id, cwd, ok := sessionMeta([]byte(tc.line))
		if ok != (tc.id != "") || ok && (id != tc.id || cwd != tc.cwd) {
			t.Errorf("%s: sessionMeta(%q) = %q, %q, %v; want %q, %q", tc.name, tc.line, id, cwd, ok, tc.id, tc.cwd)
		}
	}
}

func TestFirstPrompt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data, want string
		found            bool
	}{
		{"item_completed", `{"type":"response_item","payload":{"type":"message","role":"user"}}` + "\n" +
			`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"hi"},{"type":"text","text":"there"}]}}}` + "\n", "hi there", true},
		{"legacy user_message", `{"type":"event_msg","payload":{"type":"user_message","message":"old"}}` + "\n", "old", true},
		{"other items first", `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage"}}}` + "\n" +
			`{"type":"event_msg","payload":{"type":"user_message","message":"second"}}` + "\n", "second", true},
		{"cut line", `{"type":"event_msg","payload":{"type":"user_message","message":"cu`, "", false},
		{"none", `{"type":"event_msg","payload":{"type":"task_started"}}` + "\n", "", false},
	} {
		got, found := firstPrompt([]byte(tc.data))
		if got != tc.want || found != tc.found {
			t.Errorf("%s: firstPrompt = %q, %v; want %q, %v", tc.name, got, found, tc.want, tc.found)
		}
	}
}

func FuzzRolloutHead(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/codex/history/.codex/sessions/*/*/*/*.jsonl")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l[:min(len(l), 2000)])
		}
	}
	f.Add([]byte(`{"type":"session_meta","payload":{"id":"a","cwd":"/w"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sessionMeta(data)
		firstPrompt(data)
		firstPrompt(append(data, '\n'))
	})
}

package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// keepInterrupted writes back what the CLI rolled back of the turn since
// the mark, then the partial answer with the CLI's note; it leaves a turn
// the CLI kept alone, and records the message of a turn the CLI recorded
// nothing of. The records are as the CLI writes them, as the CLI reads
// them: a "$set" of the messages or a "$rewindTo" removes messages.
func TestKeepInterrupted(t *testing.T) {
	t.Parallel()
	const id = "0530f130-75a4-4404-8fda-2fde70ff96e7"
	before := `{"sessionId":"` + id + `","projectHash":"h","startTime":"2026-11-25T07:58:01Z"}` + "\n" +
		`{"$set":{"messages":[{"id":"c","type":"user","content":[{"text":"<session_context>…"}]}]}}` + "\n" +
		`{"id":"e1","type":"user","content":[{"text":"earlier"}]}` + "\n" +
		`{"id":"e2","type":"gemini","content":"Earlier answer."}` + "\n"
	rollback := `{"$set":{"messages":[{"id":"c"},{"id":"e1"},{"id":"e2"}],"lastUpdated":"2026-11-25T07:59:00Z"}}` + "\n"
	user := `{"id":"u1","type":"user","content":[{"text":"think hard"}]}` + "\n"
	answer := `{"id":"g1","type":"gemini","content":"Checking."}` + "\n"
	withCall := `{"id":"g1","type":"gemini","content":"Checking.","toolCalls":[{"id":"call1","name":"run_shell_command"}]}` + "\n"
	response := `{"id":"r1","type":"user","content":[{"functionResponse":{"id":"call1"}}]}` + "\n"
	for _, tc := range []struct {
		name    string
		before  string // the file when the turn's message is sent
		during  string // what the CLI wrote since
		partial string
		want    []string // the records appended: type, then content
	}{
		{"stopped before the answer", before, user + `{"$set":{"lastUpdated":"x"}}` + "\n" + rollback, "",
			[]string{"user", `[{"text":"think hard"}]`, "gemini", `"` + interruptedNote + `"`}},
		{"stopped mid-answer", before, user + rollback, "Pineapples are ",
			[]string{"user", `[{"text":"think hard"}]`, "gemini", `"Pineapples are\n\n` + interruptedNote + `"`}},
		{"stopped after a tool call ran", before, user + answer + withCall + response + rollback, "",
			[]string{"user", `[{"text":"think hard"}]`, "gemini", `"Checking."`, "user", `[{"functionResponse":{"id":"call1"}}]`,
				"gemini", `"` + interruptedNote + `"`}},
		{"a first turn", before[:strings.Index(before, `{"id":"e1"`)], user + `{"$set":{"messages":[{"id":"c"}]}}` + "\n", "",
			[]string{"user", `[{"text":"think hard"}]`, "gemini", `"` + interruptedNote + `"`}},
		{"kept by the CLI", before, user + answer, "Checking.", nil},
		{"nothing recorded", before, "", "", []string{"user", `[{"text":"think hard"}]`, "gemini", `"` + interruptedNote + `"`}},
		{"rewound", before, user + `{"$rewindTo":"u1"}` + "\n", "",
			[]string{"user", `[{"text":"think hard"}]`, "gemini", `"` + interruptedNote + `"`}},
		{"an earlier rewind is not the turn's", before + `{"$rewindTo":"e2"}` + "\n", user + answer, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, workdir := t.TempDir(), t.TempDir()
			file := filepath.Join(chatsDir(t, home, workdir), "session-2026-11-25T07-58-"+id[:8]+".jsonl")
			os.WriteFile(file, []byte(tc.before), 0o644)
			p := New(Config{Home: home, Clock: coretest.NewManualClock()}, nil)
			mark := p.markChat(workdir, id)
			if mark.path != file || mark.size != int64(len(tc.before)) {
				t.Fatalf("mark = %+v, want the end of %s", mark, file)
			}
			plugintest.AppendTo(t, file, tc.during)
			if err := p.keepInterrupted(mark, core.Turn{Workdir: workdir, Prompt: "think hard"}, tc.partial); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(file)
			got := messages(t, data[len(tc.before)+len(tc.during):])
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("appended\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if kept, _ := readChat(data, 0); len(tc.want) > 0 && (!kept["e1"] && strings.Contains(tc.before, `"e1"`) || !kept["c"]) {
				t.Errorf("the session's earlier messages are gone: %v", kept)
			}
		})
	}
}

// messages are the type and content of each message record of data.
func messages(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for line := range bytes.Lines(data) {
		var r struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(line, &r) != nil || r.ID == "" {
			t.Fatalf("%q is not a message record", line)
		}
		out = append(out, r.Type, string(r.Content))
	}
	return out
}

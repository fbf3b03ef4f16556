package claude_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// streams are the real CLI's output recorded by plugintest's capture test.
func streams(t testing.TB) []string {
	return plugintest.Streams(t, "../../testdata/claude/*.jsonl")
}

// describe renders events and the result as stable text for a golden file.
func describe(events []core.Event, res *core.TurnResult) string {
	return plugintest.FormatEvents(events) + plugintest.FormatResult(res) + "\n"
}

// twoBytes reads at most two bytes at a time.
type twoBytes struct{ r io.Reader }

func (t twoBytes) Read(p []byte) (int, error) { return t.r.Read(p[:min(2, len(p))]) }

func parse(t *testing.T, r io.Reader) string {
	t.Helper()
	var events []core.Event
	emit := func(ev core.Event) { events = append(events, ev) }
	p := claude.NewParser(emit)
	if err := claude.ReadStream(r, p, emit); err != nil {
		t.Fatal(err)
	}
	return describe(events, p.Result())
}

func TestParseGolden(t *testing.T) {
	for _, file := range streams(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			whole := parse(t, bytes.NewReader(data))
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(whole), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), whole); diff != "" {
				t.Errorf("parse %s mismatch (-want +got):\n%s", file, diff)
			}
			// The same events however the bytes arrive.
			var events []core.Event
			lp := claude.NewParser(func(ev core.Event) { events = append(events, ev) })
			for _, l := range bytes.Split(data, []byte("\n")) {
				lp.Line(l)
			}
			if byLine := describe(events, lp.Result()); byLine != whole {
				t.Errorf("line by line differs from whole:\n%s", cmp.Diff(whole, byLine))
			}
			if pieces := parse(t, twoBytes{bytes.NewReader(data)}); pieces != whole {
				t.Errorf("two-byte pieces differ from whole:\n%s", cmp.Diff(whole, pieces))
			}
		})
	}
}

func TestParseToleratesGarbage(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`not json at all`,
		`{"type":"system","subtype":"init","session_id":"s1","model":"m"}`,
		`{"type":"brand_new_type","whatever":[1,2,3]}`,
		`{"type":"assistant","message":"not an object"}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"hi"},{"type":"mystery"}]},"parent_tool_use_id":null}`,
		"\x00\xff\xfe",
		`{"type":"result","subtype":"success","is_error":false,"session_id":"s1"`, // cut mid-line
	}, "\n")
	got := parse(t, strings.NewReader(in))
	want := "session token=\"s1\" model=\"m\"\ntext \"hi\"\nresult none\n"
	if got != want {
		t.Errorf("parse = %q, want %q", got, want)
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Bash":                                  "Bash",
		"mcp__process-manager__restart_process": "Process Manager · Restart Process",
		"mcp__github__create_pull_request":      "Github · Create Pull Request",
		"mcp__solo":                             "Solo",
	} {
		if got := claude.ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/claude/*.jsonl")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		p := claude.NewParser(func(core.Event) {})
		p.Line(line)
		p.Line(line)
	})
}

package plugintest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
)

// Feed is one way of delivering a recorded stream to a parser.
type Feed struct {
	Name   string
	Reader io.Reader
}

// Feeds returns data whole, one line per read, and two bytes per read, so
// a golden test sees that a parser does not depend on how the pipe splits
// its input.
func Feeds(data []byte) []Feed {
	return []Feed{
		{"whole", bytes.NewReader(data)},
		{"lines", &lineReader{data: data}},
		{"2bytes", &pieceReader{data: data, n: 2}},
	}
}

type lineReader struct{ data []byte }

func (r *lineReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := bytes.IndexByte(r.data, '\n') + 1
	if n == 0 {
		n = len(r.data)
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

type pieceReader struct {
	data []byte
	n    int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.data[:min(r.n, len(r.data))])
	r.data = r.data[n:]
	return n, nil
}

// FormatEvents renders events one per line, for golden files a person can
// read.
func FormatEvents(events []core.Event) string {
	var b strings.Builder
	for _, ev := range events {
		b.WriteString(FormatEvent(ev))
		b.WriteByte('\n')
	}
	return b.String()
}

// FormatEvent renders one event on one line.
func FormatEvent(ev core.Event) string {
	switch ev.Kind {
	case core.EventText:
		return fmt.Sprintf("text %q", ev.Text)
	case core.EventSession:
		return fmt.Sprintf("session token=%q model=%q", ev.SessionID, ev.Model)
	case core.EventBlock:
		return "block " + formatBlock(ev.Block)
	case core.EventQuestion:
		q := ev.Question
		s := fmt.Sprintf("question tool=%q summary=%q detail=%q", q.Tool, q.Summary, q.Detail)
		if len(q.Options) > 0 {
			s += fmt.Sprintf(" options=%q", q.Options)
		}
		return s
	case core.EventLimit:
		w := ev.Limit
		return fmt.Sprintf("limit window=%q used=%d resets=%s rejected=%v", w.Window, w.UsedPercent, w.ResetsAt.Format(time.RFC3339), w.Rejected)
	case core.EventBackground:
		if b := ev.Background; b != nil {
			return fmt.Sprintf("background tasks=%q answered=%t", b.Tasks, b.Answered)
		}
	}
	return fmt.Sprintf("event kind=%d", ev.Kind)
}

func formatBlock(bl core.ResponseBlock) string {
	s := bl.Kind.String()
	add := func(name, v string) {
		if v != "" {
			s += fmt.Sprintf(" %s=%q", name, v)
		}
	}
	add("id", bl.ID)
	add("tool", bl.Tool)
	add("status", string(bl.Status))
	add("path", bl.Path)
	add("action", bl.Action)
	add("lang", bl.Language)
	add("text", bl.Text)
	add("detail", bl.Detail)
	return s
}

// Golden compares got with the golden file at path, or rewrites the file
// when update is set (tests pass their own -update flag).
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (-want +got; run with -update to accept):\n%s", path, cmp.Diff(string(want), got))
	}
}

// FormatResult renders a turn's result on one line; nil is "result none".
// The context's fill (the footer's ctx) is shown where the CLI told it.
func FormatResult(r *core.TurnResult) string {
	if r == nil {
		return "result none"
	}
	s := fmt.Sprintf("result token=%q error=%v duration=%s cost=%g in=%d out=%d",
		r.SessionID, r.IsError, r.Duration, r.CostUSD, r.InputTokens, r.OutputTokens)
	if r.ContextTokens > 0 || r.ContextWindow > 0 {
		s += fmt.Sprintf(" ctx=%d/%d", r.ContextTokens, r.ContextWindow)
	}
	return s
}

// Streams returns the recorded streams matching the glob patterns, in
// order, leaving out transcripts (history files, not stdout). It fails
// the test when there are none: a golden test over nothing passes
// vacuously.
func Streams(t testing.TB, patterns ...string) []string {
	t.Helper()
	var files []string
	for _, pattern := range patterns {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasPrefix(filepath.Base(f), "transcript") {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		t.Fatalf("no recorded streams match %q", patterns)
	}
	return files
}

// ReadFunc reads a CLI's recorded output as the plugin's turn reads it,
// emitting its events, and returns the turn's result (nil when the output
// carried none).
type ReadFunc func(r io.Reader, emit func(core.Event)) (*core.TurnResult, error)

// ReadRendered reads r with read and renders the events and the result,
// for golden files.
func ReadRendered(t testing.TB, read ReadFunc, r io.Reader) string {
	t.Helper()
	var events []core.Event
	res, err := read(r, func(ev core.Event) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	return FormatEvents(events) + FormatResult(res) + "\n"
}

// Goldens checks recorded outputs against their golden files, a parallel
// subtest each: every file is read by read whole, one line per read and
// two bytes per read, and the rendered events and result must be the
// same every way and, read whole, those of testdata/<prefix><name>.golden
// (rewritten when update is set).
func Goldens(t *testing.T, files []string, prefix string, update bool, read ReadFunc) {
	for _, file := range files {
		name := prefix + strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			feeds := Feeds(data)
			whole := ReadRendered(t, read, feeds[0].Reader)
			Golden(t, filepath.Join("testdata", name+".golden"), whole, update)
			for _, f := range feeds[1:] {
				if got := ReadRendered(t, read, f.Reader); got != whole {
					t.Errorf("fed %s, events differ from fed whole:\n%s", f.Name, cmp.Diff(whole, got))
				}
			}
		})
	}
}

// FuzzSeeds seeds a fuzz target with each file whole and each of its
// lines.
func FuzzSeeds(f *testing.F, files []string) {
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
}

package configured_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/configured"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestMain lets the test binary play a CLI (the os/exec helper-process
// pattern): JAKEBOT_HELPER names the part.
func TestMain(m *testing.M) {
	switch os.Getenv("JAKEBOT_HELPER") {
	case "":
		os.Exit(m.Run())
	case "spinner":
		spinner()
	case "lines":
		fmt.Printf("args: %s\n", strings.Join(os.Args[1:], "|"))
		fmt.Print("first line\nSession: abc-1\n\nlast line\n")
	case "cat":
		data, err := os.ReadFile(os.Getenv("JAKEBOT_CAT"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Stdout.Write(data)
	case "fail":
		fmt.Println("some output")
		fmt.Fprint(os.Stderr, "warming up\nerror: no API key configured\n")
		os.Exit(4)
	case "hang":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "JAKEBOT_HELPER=sleep")
		if err := child.Start(); err != nil {
			os.Exit(3)
		}
		fmt.Print("ready\n")
		time.Sleep(time.Hour)
	case "sleep":
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

// spinner behaves like an interactive CLI: it insists on a terminal,
// draws a coloured spinner with carriage returns while it "thinks", then
// replaces it with the answer and a progress line redrawn in place.
func spinner() {
	if link, _ := os.Readlink("/proc/self/fd/1"); !strings.HasPrefix(link, "/dev/pts/") {
		fmt.Println("error: not a terminal")
		os.Exit(3)
	}
	fmt.Printf("args: %s\n", strings.Join(os.Args[1:], "|"))
	fmt.Print("\x1b[1mAsking the model\x1b[0m\n")
	frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	for i := range 40 {
		fmt.Printf("\r\x1b[36m%s\x1b[0m Thinking… %ds", frames[i%len(frames)], i)
		time.Sleep(3 * time.Millisecond)
	}
	fmt.Print("\r\x1b[2K\x1b[32mHello\x1b[0m from a \x1b[1;4mterminal\x1b[0m CLI.\n")
	for _, p := range []string{"10%", "55%", "100%"} {
		fmt.Printf("\rdownloading %s", p)
		time.Sleep(3 * time.Millisecond)
	}
	fmt.Print("\nSession: sess-42\n")
}

// load parses one plugin entry for the test binary as its CLI.
func load(t *testing.T, entry string, env ...string) *configured.Plugin {
	t.Helper()
	yaml := fmt.Sprintf("plugins:\n  - id: fake\n    name: Fake CLI\n    bin: %s\n%s", os.Args[0], entry)
	specs, err := configured.Parse("test.yaml", []byte(yaml), configured.Options{Taken: taken})
	if err != nil {
		t.Fatalf("Parse:\n%s\n%v", yaml, err)
	}
	// A race-enabled helper would sleep a second at exit.
	specs[0].Env = append(env, "GORACE=atexit_sleep_ms=0")
	return configured.New(specs[0], nil)
}

// events collects what a turn emits.
type events struct {
	mu   sync.Mutex
	list []core.Event
	c    chan core.Event
}

func newEvents() *events { return &events{c: make(chan core.Event, 1000)} }

func (e *events) emit(ev core.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
	e.c <- ev
}

func (e *events) all() []core.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]core.Event(nil), e.list...)
}

// text is the answer the events add up to, as a reply would hold it.
func (e *events) text() string {
	var b strings.Builder
	for _, ev := range e.all() {
		if ev.Kind == core.EventText {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

func turn(t *testing.T, prompt, token string) core.Turn {
	return core.Turn{Prompt: prompt, Workdir: t.TempDir(), SessionID: token}
}

func TestPTYSpinnerIsCleaned(t *testing.T) {
	t.Parallel()
	mark, alive := plugintest.ProcessMarker(t)
	p := load(t, `    args: ["{message}", [--resume, "{resume}"]]
    mode: pty
    resume: 'Session: (\S+)'
    terminal: {cols: 80, rows: 24, settle: 2ms}
`, "JAKEBOT_HELPER=spinner", mark)
	ev := newEvents()
	res, err := p.Run(context.Background(), turn(t, "hi there", "sess-0"), ev.emit)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := "args: hi there|--resume|sess-0\nAsking the model\nHello from a terminal CLI.\ndownloading 100%\nSession: sess-42"
	var shown []string
	for _, e := range ev.all() {
		switch {
		case e.Kind == core.EventSession:
			continue
		case e.Kind != core.EventBlock || e.Block.Kind != core.BlockText || e.Block.ID != "terminal":
			t.Fatalf("unexpected event %+v", e)
		}
		shown = append(shown, e.Block.Text)
		if strings.ContainsAny(e.Block.Text, "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏\x1b") || strings.Contains(e.Block.Text, "Thinking") || strings.Contains(e.Block.Text, "10%") {
			t.Errorf("a spinner, progress redraw or escape reached the chat: %q", e.Block.Text)
		}
		if !strings.HasPrefix(want, e.Block.Text) {
			t.Errorf("shown text %q is not a settled part of the answer", e.Block.Text)
		}
	}
	if len(shown) == 0 || shown[len(shown)-1] != want {
		t.Fatalf("last shown text = %q, want %q", shown, want)
	}
	// 40 spinner frames and 3 progress states, but only settled lines:
	// at most one update per line of the answer, plus the final one.
	if len(shown) > 6 {
		t.Errorf("%d updates for a 5-line answer: %q", len(shown), shown)
	}
	if res.SessionID != "sess-42" {
		t.Errorf("SessionID = %q, want sess-42 from the resume pattern", res.SessionID)
	}
	if pids := alive(); len(pids) != 0 {
		t.Errorf("processes %v outlived the turn", pids)
	}
}

func TestPlainLinesAndResume(t *testing.T) {
	t.Parallel()
	p := load(t, `    args: [--print, "{message}", [--session, "{resume}"], --cwd, "{workdir}"]
    mode: plain
    resume: 'Session: (\S+)'
`, "JAKEBOT_HELPER=lines")
	ev := newEvents()
	tr := turn(t, "-v is a flag?", "")
	res, err := p.Run(context.Background(), tr, ev.emit)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := "args: --print| -v is a flag?|--cwd|" + tr.Workdir + "\nfirst line\nSession: abc-1\n\nlast line\n"
	if got := ev.text(); got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if res.SessionID != "abc-1" {
		t.Errorf("SessionID = %q, want abc-1", res.SessionID)
	}
	if !p.KeepsSessions() || p.CheckSessionID("abc-1") != nil || p.CheckSessionID("--exec=evil") == nil {
		t.Error("a plugin with a resume pattern must keep sessions and accept only safe ids")
	}
}

// claudeMapping maps Claude Code's stream-json by fields alone.
const claudeMapping = `    args: [-p, "{message}", [--resume, "{resume}"]]
    mode: jsonl
    jsonl:
      text: {path: event.delta.text, when: {type: stream_event, event.delta.type: text_delta, parent_tool_use_id: null}}
      session: session_id
      error: {path: result, when: {type: result, is_error: true}}
`

func TestJSONLMappingOverARecordedStream(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		file, text, session, errText string
	}{
		{"text.jsonl", "Hello from the fake model.", "c988f484-dab6-44a9-b153-339f798ed835", ""},
		{"api_error.jsonl", "", "c4de9158-85b7-4922-a972-1120f42bf25b", "Invalid API key · Fix external API key"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			file, err := filepath.Abs(filepath.Join("..", "..", "testdata", "claude", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			p := load(t, claudeMapping, "JAKEBOT_HELPER=cat", "JAKEBOT_CAT="+file)
			ev := newEvents()
			res, err := p.Run(context.Background(), turn(t, "hello", ""), ev.emit)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := ev.text(); got != tt.text {
				t.Errorf("text = %q, want %q", got, tt.text)
			}
			var errs []string
			for _, e := range ev.all() {
				if e.Kind == core.EventBlock && e.Block.Kind == core.BlockError {
					errs = append(errs, e.Block.Text)
				}
			}
			if tt.errText == "" && len(errs) > 0 || tt.errText != "" && (len(errs) != 1 || errs[0] != tt.errText) {
				t.Errorf("errors = %q, want %q", errs, tt.errText)
			}
			if res.SessionID != tt.session || res.IsError != (tt.errText != "") {
				t.Errorf("result = %+v, want session %s, error %v", res, tt.session, tt.errText != "")
			}

			// Replaying the file without a process gives the same events.
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			replayed := newEvents()
			out, err := p.ReadStream(f, replayed.emit)
			if err != nil || out == nil || out.SessionID != tt.session || replayed.text() != tt.text || len(replayed.all()) != len(ev.all()) {
				t.Errorf("ReadStream = %+v, %v with %d events; Run had %d", out, err, len(replayed.all()), len(ev.all()))
			}
		})
	}
}

func TestExitFailureShowsStderr(t *testing.T) {
	t.Parallel()
	p := load(t, "    args: [\"{message}\"]\n    mode: plain\n", "JAKEBOT_HELPER=fail")
	ev := newEvents()
	_, err := p.Run(context.Background(), turn(t, "x", "tok"), ev.emit)
	want := "Fake CLI failed (exit code 4):\nwarming up\nerror: no API key configured"
	if err == nil || core.UserMessage(err) != want {
		t.Fatalf("Run error = %v, want %q", err, want)
	}
	if ev.text() != "some output\n" {
		t.Errorf("text = %q", ev.text())
	}
	if p.KeepsSessions() || p.CheckSessionID("abc") == nil {
		t.Error("a plugin with no session source must not keep sessions")
	}
}

func TestMissingCLIAtRunTime(t *testing.T) {
	t.Parallel()
	p := configured.New(configured.Spec{ID: "gone", Name: "Gone", Bin: "jakebot-no-such-cli", Mode: configured.ModePlain,
		Args: []configured.Arg{{Placeholder: configured.PhMessage}}, Source: "plugins.yaml:7"}, nil)
	_, err := p.Run(context.Background(), turn(t, "x", ""), func(core.Event) {})
	if want := "Gone CLI not found (jakebot-no-such-cli). Install it, or fix its bin in the plugins file (plugins.yaml:7)"; err == nil || core.UserMessage(err) != want {
		t.Fatalf("Run error = %v, want %q", err, want)
	}
}

func TestCancelKillsATerminalCLIAndItsChildren(t *testing.T) {
	t.Parallel()
	mark, alive := plugintest.ProcessMarker(t)
	p := load(t, "    args: [\"{message}\"]\n    mode: pty\n    grace: 100ms\n    terminal: {settle: 2ms}\n", "JAKEBOT_HELPER=hang", mark)
	ev := newEvents()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, turn(t, "x", ""), ev.emit)
		done <- err
	}()
	for e := range ev.c {
		if e.Kind == core.EventBlock && e.Block.Text == "ready" {
			break
		}
	}
	if n := len(alive()); n != 2 {
		t.Fatalf("%d processes running, want the CLI and its child", n)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Run after cancel = %v, want context.Canceled", err)
	}
	if pids := alive(); len(pids) != 0 {
		t.Fatalf("processes %v outlived the cancelled turn", pids)
	}
}

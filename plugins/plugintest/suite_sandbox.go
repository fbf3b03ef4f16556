package plugintest

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// wallProbe is the shell command an agent taken over runs: it reads the
// bot's .env, looks for another CLI's token in every /proc/*/environ it
// can read and in those of that CLI's processes by their ids, writes
// outside its workdir and inside it, and prints how each went. No $(…)
// nor $((…)): the Gemini CLI refuses them.
const wallProbe = `cat %[1]s; echo "secret-read=$?"
grep -l %[2]s /proc/[0-9]*/environ 2>/dev/null | sed 's/^/environ-hit /'
for p in %[3]s; do cat /proc/$p/environ >/dev/null 2>&1 && echo "environ-read=$p"; done
echo planted > %[4]s; echo "write-outside=$?"
echo in > inside.txt; echo "write-inside=$?"; echo probe-end`

// OtherCLI starts, behind sb, a process standing for another
// conversation's CLI, with token in its environment, and returns the ids
// of its processes as the bot sees them. It ends with the test.
func OtherCLI(t testing.TB, sb *cliproc.Sandbox, token string) []int {
	t.Helper()
	mark, alive := ProcessMarker(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := cliproc.Start(ctx, cliproc.Spec{Bin: "sh", Args: []string{"-c", "echo ready; exec sleep 600"}, Dir: t.TempDir(),
		Sandbox: sb, Env: []string{"OTHER_TURN_TOKEN=" + token, mark}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		io.Copy(io.Discard, p.Stdout)
		p.Wait()
	})
	if line, _ := bufio.NewReader(p.Stdout).ReadString('\n'); line != "ready\n" {
		res, _ := p.Wait()
		t.Fatalf("the other CLI said %q, then %+v", line, res)
	}
	var pids []int
	for _, proc := range alive() {
		pids = append(pids, proc.PID)
	}
	return pids
}

// WallProbe is a probe of a sandbox's walls: Command, run by a CLI's
// shell tool, reads the bot's .env beside the workdir, looks for another
// running CLI's token in the environments it can read, and writes beside
// the workdir and in it; Check checks what it found.
type WallProbe struct {
	Command         string
	dotenv, outside string
}

// NewWallProbe writes the bot's .env in a folder of the test's and starts
// another CLI behind sb holding a token, for Command to look for.
func NewWallProbe(t testing.TB, sb *cliproc.Sandbox) WallProbe {
	t.Helper()
	token := "tok-" + rand.Text()
	pids := OtherCLI(t, sb, token)
	bot := t.TempDir()
	w := WallProbe{dotenv: filepath.Join(bot, ".env"), outside: filepath.Join(bot, "planted")}
	if err := os.WriteFile(w.dotenv, []byte("TELEGRAM_TOKEN=bot-secret-"+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(pids))
	for i, pid := range pids {
		ids[i] = fmt.Sprint(pid)
	}
	w.Command = fmt.Sprintf(wallProbe, w.dotenv, token, strings.Join(ids, " "), w.outside)
	return w
}

// Check checks, in what the CLI sent its model after running Command
// (requests), that Command read and wrote nothing outside workdir, and
// wrote inside.
func (w WallProbe) Check(t testing.TB, requests []Request, workdir string) {
	t.Helper()
	var sent strings.Builder
	for _, r := range requests {
		sent.WriteString(r.Text() + "\n")
	}
	// Whole lines: the request also carries the command, which names
	// them.
	for _, want := range []string{`secret-read=[1-9]\d*`, `write-outside=[1-9]\d*`, `write-inside=0`, `probe-end`} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(sent.String()) {
			t.Errorf("the tool's output lacks a line %q:\n%s", want, tail(sent.String(), 3000))
		}
	}
	for _, leak := range []string{"bot-secret-", "environ-read=", "environ-hit "} {
		if regexp.MustCompile(`(?m)^` + leak).MatchString(sent.String()) {
			t.Errorf("the tool's output holds %q:\n%s", leak, tail(sent.String(), 3000))
		}
	}
	if _, err := os.Stat(w.outside); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the tool wrote outside its workdir (%v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(workdir, "inside.txt")); string(b) != "in\n" {
		t.Errorf("inside.txt = %q, %v", b, err)
	}
}

// sandboxed: behind bwrap, the real CLI's shell tool can neither read
// the bot's .env beside the workdir nor another CLI's environment, nor
// write outside its workdir; it writes inside, and the turn answers,
// resumes in the next and stops when cancelled, keeping its session.
func (s Suite) sandboxed(t *testing.T) {
	if s.Walled == nil {
		t.Skip("the plugin has no Walled fixture")
	}
	sb := Sandbox(t, cliproc.SandboxBwrap, "")
	probe := NewWallProbe(t, sb)
	hold := make(chan struct{})
	defer close(hold)
	f := s.Walled(t, sb, Reply{Tool: s.Shell(probe.Command)}, Reply{Text: []string{"Walled in."}},
		Reply{Text: []string{"Still here."}}, Reply{Text: []string{"too late"}, Hold: hold})

	first := f.Run(context.Background(), "probe the walls", "")
	if first.Err != nil || first.Result.IsError || first.Text() != "Walled in." || first.Result.SessionID == "" {
		t.Fatalf("Run = %+v, %q, %v; want the answer after the tool", first.Result, first.Text(), first.Err)
	}
	probe.Check(t, f.Model.Requests(), f.Workdir)

	f.Plugin = f.Restart()
	second := f.Run(context.Background(), "still there?", first.Result.SessionID)
	if second.Err != nil || second.Text() != "Still here." || second.Result.SessionID != first.Result.SessionID {
		t.Fatalf("resumed turn = %+v, %q, %v", second.Result, second.Text(), second.Err)
	}
	s.remembers(t, f, "probe the walls", "Walled in.", "still there?")

	for drained := false; !drained; {
		select {
		case <-f.Model.Arrived():
		default:
			drained = true
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan TurnOutput)
	go func() { done <- RunTurn(ctx, t, f.Plugin, f.Turn("take your time", first.Result.SessionID, false)) }()
	select {
	case <-f.Model.Arrived():
	case tr := <-done:
		t.Fatalf("Run returned before the model was asked: %+v, %v", tr.Result, tr.Err)
	case <-time.After(time.Minute):
		t.Fatal("the model was never asked")
	}
	cancel()
	if tr := <-done; !errors.Is(tr.Err, context.Canceled) || tr.Result.SessionID != first.Result.SessionID {
		t.Errorf("stopped turn = %+v, %v; want context.Canceled and the session", tr.Result, tr.Err)
	}
	// The fixture checks that no process is left.
}

// tail is the end of s, at most n bytes of it.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

package bot_test

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// binBot is the built jakebot binary running on the console, fed through
// a pipe.
type binBot struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	chunks chan string
	seen   string // stdout read but not yet matched
	all    *lockedBuffer
	stderr *lockedBuffer
	done   chan error
	exited chan struct{} // closed once the process is reaped
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// binEnv is the environment for the binary: the fixture's (private home,
// fake model, process marker) plus the bot's settings.
func (f *fixture) binEnv(extra ...string) []string {
	env := append([]string{}, f.env...)
	env = append(env,
		"CLAUDE_BIN="+plugintest.CLIPath(f.t, "claude"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(f.home, ".claude"),
		"ALLOWED_ROOTS="+f.workdir,
		"LOG_LEVEL=debug",
	)
	return append(env, extra...)
}

func startBinary(t testing.TB, dir string, env []string) *binBot {
	t.Helper()
	cmd := exec.Command(buildJakebot(t))
	cmd.Dir = dir
	cmd.Env = env
	return startProcess(t, cmd)
}

// startProcess starts cmd, a jakebot on the console (the binary, or a
// container running it), its stdin a pipe the test writes.
func startProcess(t testing.TB, cmd *exec.Cmd) *binBot {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &binBot{t: t, cmd: cmd, in: in, chunks: make(chan string, 1024), all: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan error, 1), exited: make(chan struct{})}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := out.Read(buf)
			if n > 0 {
				b.all.Write(buf[:n])
				b.chunks <- string(buf[:n])
			}
			if err != nil {
				close(b.chunks)
				b.done <- cmd.Wait()
				close(b.exited)
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		// Reaped before the fixture looks for the test's processes: a
		// killed bot still exiting was counted as one that outlived it.
		select {
		case <-b.exited:
		case <-time.After(time.Minute):
			t.Errorf("jakebot was not reaped a minute after it was killed")
		}
		if t.Failed() {
			t.Logf("jakebot stderr:\n%s", b.stderr.String())
		}
	})
	return b
}

func (b *binBot) say(lines ...string) {
	b.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(b.in, l+"\n"); err != nil {
			b.t.Fatal(err)
		}
	}
}

// expect waits until the output read so far matches pattern, and returns
// the match; later expectations look only after it.
func (b *binBot) expect(pattern string) string {
	b.t.Helper()
	re := regexp.MustCompile(pattern)
	timeout := time.After(2 * time.Minute)
	for {
		if loc := re.FindStringIndex(b.seen); loc != nil {
			m := b.seen[loc[0]:loc[1]]
			b.seen = b.seen[loc[1]:]
			return m
		}
		select {
		case c, ok := <-b.chunks:
			if !ok {
				b.t.Fatalf("jakebot exited before printing %q; it printed:\n%s", pattern, b.all.String())
			}
			b.seen += c
		case <-timeout:
			b.t.Fatalf("no %q in jakebot's output:\n%s", pattern, b.all.String())
		}
	}
}

// wait waits for the process to exit and returns its exit code.
func (b *binBot) wait() int {
	b.t.Helper()
	for range b.chunks {
	}
	err := <-b.done
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return 0
}

func (b *binBot) signal(sig syscall.Signal) {
	b.t.Helper()
	if err := b.cmd.Process.Signal(sig); err != nil {
		b.t.Fatal(err)
	}
}

// waitFor polls cond, for conditions that only the file system shows.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

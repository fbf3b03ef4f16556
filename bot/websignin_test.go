package bot_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The web's sign-in URL holds WEB_TOKEN: jakebot prints it only when its
// stderr is a terminal. Where stderr is a pipe (systemd's journal, docker
// logs), the log says how to get it, and the token is nowhere.
func TestWebSignInURLOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	const tok = "web-token-for-the-terminal-test-0123"
	for _, tc := range []struct {
		name     string
		terminal bool
	}{
		{"terminal", true},
		{"pipe", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := exec.Command(buildJakebot(t))
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "ALLOWED_ROOTS=" + dir, "STATE_FILE=off",
				"CLAUDE_BIN=" + filepath.Join(dir, "no-claude"), "WEB_ADDR=127.0.0.1:0", "WEB_TOKEN=" + tok}
			var stderr io.Reader
			if tc.terminal {
				master, tty, err := pty.Open()
				if err != nil {
					t.Skipf("no pseudo-terminal: %v", err)
				}
				defer master.Close()
				defer tty.Close()
				cmd.Stderr, stderr = tty, master
			} else {
				pipe, err := cmd.StderrPipe()
				if err != nil {
					t.Fatal(err)
				}
				stderr = pipe
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				cmd.Process.Signal(syscall.SIGTERM)
				cmd.Wait()
			}()
			// The URL comes before the log line, where it comes.
			seen := readUntil(t, stderr, "serving the web page")
			if got := strings.Contains(seen, tok); got != tc.terminal {
				t.Errorf("the token is on stderr: %v, want %v:\n%s", got, tc.terminal, seen)
			}
			if tc.terminal && !strings.Contains(seen, "Web: sign in at http://127.0.0.1:") {
				t.Errorf("no sign-in URL on the terminal:\n%s", seen)
			}
			if hint := strings.Contains(seen, "`jakebot web-url` prints it"); hint == tc.terminal {
				t.Errorf("the log says how to get the URL: %v, want %v:\n%s", hint, !tc.terminal, seen)
			}
		})
	}
}

// readUntil reads r's lines until one holds want, and returns them all.
func readUntil(t *testing.T, r io.Reader, want string) string {
	t.Helper()
	lines, done := make(chan string), make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-done: // the rest is read and dropped until the end
			}
		}
	}()
	var seen strings.Builder
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("stderr ended before %q:\n%s", want, seen.String())
			}
			seen.WriteString(line + "\n")
			if strings.Contains(line, want) {
				return seen.String()
			}
		case <-timeout:
			t.Fatalf("no %q on stderr:\n%s", want, seen.String())
		}
	}
}

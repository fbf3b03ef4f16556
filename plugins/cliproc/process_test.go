package cliproc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestMain lets the test binary act as a fake CLI (the os/exec helper
// process pattern): JAKEBOT_HELPER names what to do.
func TestMain(m *testing.M) {
	switch os.Getenv("JAKEBOT_HELPER") {
	case "":
		os.Exit(m.Run())
	case "sleep":
		time.Sleep(time.Hour)
	case "parent":
		// Start a grandchild that would outlive us, then wait.
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "JAKEBOT_HELPER=sleep")
		if err := child.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println("ready")
		if os.Getenv("IGNORE_TERM") == "1" {
			signal.Ignore(syscall.SIGTERM)
		}
		if os.Getenv("EXIT_NOW") == "1" {
			os.Exit(0)
		}
		time.Sleep(time.Hour)
	case "fail":
		fmt.Fprintln(os.Stderr, "line 1\nline 2\nfatal: it broke")
		os.Exit(7)
	}
	os.Exit(0)
}

func start(t *testing.T, ctx context.Context, env ...string) (*cliproc.Process, func() []int) {
	t.Helper()
	mark, alive := plugintest.ProcessMarker(t)
	p, err := cliproc.Start(ctx, cliproc.Spec{Bin: os.Args[0], Env: append(env, mark), Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p, alive
}

func readLine(t *testing.T, r io.Reader) string {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return strings.TrimSpace(line)
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  []string
	}{
		{"exits on SIGTERM", nil},
		{"ignores SIGTERM", []string{"IGNORE_TERM=1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			p, alive := start(t, ctx, append(tt.env, "JAKEBOT_HELPER=parent")...)
			if got := readLine(t, p.Stdout); got != "ready" {
				t.Fatalf("helper said %q", got)
			}
			if n := len(alive()); n != 2 {
				t.Fatalf("%d processes running, want the CLI and its child", n)
			}
			cancel()
			io.Copy(io.Discard, p.Stdout)
			res, err := p.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != -1 {
				t.Errorf("exit code = %d, want -1 (killed)", res.ExitCode)
			}
			if pids := alive(); len(pids) != 0 {
				t.Fatalf("processes %v outlived the cancelled turn", pids)
			}
		})
	}
}

func TestExitKillsWhatTheCLILeftBehind(t *testing.T) {
	t.Parallel()
	p, alive := start(t, context.Background(), "JAKEBOT_HELPER=parent", "EXIT_NOW=1")
	io.Copy(io.Discard, p.Stdout) // returns: the leftover child is killed
	if res, err := p.Wait(); err != nil || res.ExitCode != 0 {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	if pids := alive(); len(pids) != 0 {
		t.Fatalf("processes %v outlived the CLI", pids)
	}
}

func TestFailureKeepsStderrTail(t *testing.T) {
	t.Parallel()
	p, _ := start(t, context.Background(), "JAKEBOT_HELPER=fail")
	io.Copy(io.Discard, p.Stdout)
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 7 {
		t.Errorf("exit code = %d, want 7", res.ExitCode)
	}
	if got := cliproc.StderrTail(res.Stderr, 2); got != "line 2\nfatal: it broke" {
		t.Errorf("StderrTail = %q", got)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Parallel()
	_, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "jakebot-no-such-cli"})
	if !errors.Is(err, cliproc.ErrNotFound) {
		t.Fatalf("Start of a missing binary: %v, want ErrNotFound", err)
	}
}

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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestMain lets the test binary act as a fake CLI (the os/exec helper
// process pattern): JAKEBOT_HELPER names what to do.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == cliproc.SandboxExecCommand {
		fmt.Fprintln(os.Stderr, cliproc.SandboxExec(os.Args[2:]))
		os.Exit(126)
	}
	switch os.Getenv("JAKEBOT_HELPER") {
	case "":
		os.Exit(m.Run())
	case "sleep":
		fmt.Println("child-ready")
		time.Sleep(time.Hour)
	case "parent":
		// Start a grandchild that would outlive us, then wait.
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "JAKEBOT_HELPER=sleep")
		child.Stdout = os.Stdout
		if os.Getenv("SETSID") == "1" {
			// Leave the CLI's process group and session, as daemons,
			// setsid and tmux new -d do, still holding its stdout.
			child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		if os.Getenv("IGNORE_TERM") == "1" {
			signal.Ignore(syscall.SIGTERM)
		}
		if err := child.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println("ready")
		if os.Getenv("EXIT_NOW") == "1" {
			os.Exit(0)
		}
		time.Sleep(time.Hour)
	case "joingroup":
		// Move into process group JOIN_PGID (the bot's), then say so
		// through $ESCAPED and wait to be killed.
		pgid, _ := strconv.Atoi(os.Getenv("JOIN_PGID"))
		err := syscall.Setpgid(0, pgid)
		path := os.Getenv("ESCAPED")
		os.WriteFile(path+".tmp", fmt.Appendf(nil, "%d %v\n", os.Getpid(), err), 0o600)
		os.Rename(path+".tmp", path)
		time.Sleep(time.Hour)
	case "tty":
		// Report whether stdin and stdout are a terminal, and its size.
		in, _ := os.Readlink("/proc/self/fd/0")
		out, _ := os.Readlink("/proc/self/fd/1")
		rows, cols, err := pty.Getsize(os.Stdin)
		fmt.Printf("stdin=%s stdout=%s size=%dx%d err=%v TERM=%s\n", ptsName(in), ptsName(out), cols, rows, err, os.Getenv("TERM"))
		fmt.Fprintln(os.Stderr, "on stderr")
	case "pid1":
		// As PID 1 of a PID namespace: run a CLI that leaves orphans
		// behind, and report whether any is left a zombie and whether
		// the CLI's own exit status survived.
		os.Exit(pid1())
	case "adopt":
		os.Exit(adoptScenario())
	case "fail":
		fmt.Fprintln(os.Stderr, "line 1\nline 2\nfatal: it broke")
		os.Exit(7)
	case "stream":
		fmt.Println(os.Getenv("STREAM"))
		fmt.Fprintln(os.Stderr, "a warning")
		os.Exit(exitCode())
	case "protocol":
		protocolCLI()
	case "probe":
		probe()
	case "graceful":
		graceful()
	}
	os.Exit(0)
}

func pid1() int {
	if err := cliproc.AdoptOrphans(context.Background()); err != nil {
		fmt.Println(err)
		return 1
	}
	// The CLI backgrounds a subshell that outlives it (an orphan, killed
	// at the CLI's exit by its mark), and exits 3.
	p, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "sh", Args: []string{"-c", "(sleep 30; true) & (sleep 0; true) & exit 3"}})
	if err != nil {
		fmt.Println("start:", err)
		return 1
	}
	io.Copy(io.Discard, p.Stdout)
	res, err := p.Wait()
	if err != nil || res.ExitCode != 3 {
		fmt.Printf("the CLI's exit status was lost: %+v, %v\n", res, err)
		return 1
	}
	for range 500 { // a failure guard of 10 s, not a timing assertion
		if n := zombies(); n == 0 {
			fmt.Println("no zombies")
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("%d zombies left\n", zombies())
	return 1
}

// zombies counts this process's children waiting to be reaped.
func zombies() int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(f) >= 2 && f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			n++
		}
	}
	return n
}

// As PID 1 (a container without an init), orphans the agents leave are
// reaped, and no CLI's exit status is taken from os/exec.
func TestPID1ReapsOrphans(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("a PID namespace needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	cmd := exec.Command(unshare, "--pid", "--fork", "--mount-proc", os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "JAKEBOT_HELPER=pid1")
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "unshare failed") || strings.Contains(string(out), "Operation not permitted") {
		t.Skipf("no PID namespace here: %s", out)
	}
	if err != nil || !strings.Contains(string(out), "no zombies") {
		t.Fatalf("as PID 1: %v\n%s", err, out)
	}
}

// ptsName says whether a file descriptor's target is a pseudo-terminal.
func ptsName(link string) string {
	if strings.HasPrefix(link, "/dev/pts/") {
		return "pts"
	}
	return "other"
}

func start(t *testing.T, ctx context.Context, env ...string) (*cliproc.Process, func() []plugintest.Process) {
	t.Helper()
	return startSpec(t, ctx, cliproc.Spec{}, env...)
}

// startSpec starts the test binary as a helper with spec's other fields.
func startSpec(t *testing.T, ctx context.Context, spec cliproc.Spec, env ...string) (*cliproc.Process, func() []plugintest.Process) {
	t.Helper()
	mark, alive := plugintest.ProcessMarker(t)
	spec.Bin, spec.Env, spec.Grace = os.Args[0], append(env, mark), 200*time.Millisecond
	p, err := cliproc.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return p, alive
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return strings.TrimSpace(line)
}

func TestCancelKillsTheWholeGroup(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  []string
		pty  *cliproc.TermSize
	}{
		{"exits on SIGTERM", nil, nil},
		{"ignores SIGTERM", []string{"IGNORE_TERM=1"}, nil},
		{"in a terminal", nil, &cliproc.TermSize{Cols: 80, Rows: 24}},
		{"in a terminal, ignores SIGTERM", []string{"IGNORE_TERM=1"}, &cliproc.TermSize{Cols: 80, Rows: 24}},
		{"a child left the group", []string{"SETSID=1"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			p, alive := startSpec(t, ctx, cliproc.Spec{PTY: tt.pty}, append(tt.env, "JAKEBOT_HELPER=parent")...)
			// Both have said so once both run (the child after its exec,
			// when its environment can be read).
			out := bufio.NewReader(p.Stdout)
			said := map[string]bool{readLine(t, out): true, readLine(t, out): true}
			if !said["ready"] || !said["child-ready"] {
				t.Fatalf("helpers said %v", said)
			}
			if n := len(alive()); n != 2 {
				t.Fatalf("%d processes running, want the CLI and its child", n)
			}
			cancel()
			readToEnd(t, p.Stdout)
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
	for name, env := range map[string][]string{
		"in its group":     nil,
		"out of its group": {"SETSID=1"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, alive := start(t, context.Background(), append(env, "JAKEBOT_HELPER=parent", "EXIT_NOW=1")...)
			readToEnd(t, p.Stdout) // ends: the leftover child, which holds stdout, is killed
			if res, err := p.Wait(); err != nil || res.ExitCode != 0 {
				t.Fatalf("Wait = %+v, %v", res, err)
			}
			if pids := alive(); len(pids) != 0 {
				t.Fatalf("processes %v outlived the CLI", pids)
			}
		})
	}
}

// readToEnd reads r to its end. A reader that never ends fails the test
// (a guard against hanging, not a timing assertion: shorter than the 30 s
// an escaped descendant of TestEscapedDescendantHoldsNoOutputOpen sleeps,
// which would end the output too).
func readToEnd(t *testing.T, r io.Reader) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, r)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(25 * time.Second):
		t.Fatal("the CLI's output never ended: something it started still holds it")
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

func TestPTY(t *testing.T) {
	t.Parallel()
	p, _ := startSpec(t, context.Background(), cliproc.Spec{PTY: &cliproc.TermSize{Cols: 100, Rows: 30}}, "JAKEBOT_HELPER=tty")
	if p.Input == nil {
		t.Error("Input is nil with a terminal")
	}
	out, err := io.ReadAll(p.Stdout)
	if err != nil {
		t.Fatalf("read the terminal: %v", err)
	}
	res, err := p.Wait()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	// A terminal turns "\n" into "\r\n"; stderr goes to the terminal too.
	want := "stdin=pts stdout=pts size=100x30 err=<nil> TERM=xterm-256color\r\non stderr\r\n"
	if string(out) != want {
		t.Errorf("terminal output = %q, want %q", out, want)
	}
	if res.Stderr != "" {
		t.Errorf("Stderr = %q, want nothing (it went to the terminal)", res.Stderr)
	}

	p, _ = start(t, context.Background(), "JAKEBOT_HELPER=tty")
	out, _ = io.ReadAll(p.Stdout)
	p.Wait()
	if !strings.HasPrefix(string(out), "stdin=other stdout=other") {
		t.Errorf("without a terminal the helper saw %q", out)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Parallel()
	_, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "jakebot-no-such-cli"})
	if !errors.Is(err, cliproc.ErrNotFound) {
		t.Fatalf("Start of a missing binary: %v, want ErrNotFound", err)
	}
}

// A Spec without Environ fails closed: the CLI gets the bot's environment
// without any credential-looking variable, and what Env adds.
func TestNilEnvironWithholdsSecrets(t *testing.T) {
	t.Setenv("DISCORD_TOKEN", "discord-token-of-the-bot")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-of-the-bot")
	t.Setenv("JAKEBOT_PLAIN", "kept")
	p, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "sh", Args: []string{"-c", "env"}, Env: []string{"OPENAI_API_KEY=given-by-env"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	env := "\n" + string(out)
	for _, leaked := range []string{"discord-token-of-the-bot", "sk-ant-of-the-bot"} {
		if strings.Contains(env, leaked) {
			t.Errorf("the CLI saw %q", leaked)
		}
	}
	for _, want := range []string{"\nJAKEBOT_PLAIN=kept\n", "\nOPENAI_API_KEY=given-by-env\n", "\nPATH="} {
		if !strings.Contains(env, want) {
			t.Errorf("the CLI's environment lacks %q", strings.TrimSpace(want))
		}
	}
}

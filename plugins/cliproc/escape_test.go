package cliproc_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// escapeCLI is a CLI that leaves a descendant outside its process group
// and without its run's mark (JAKEBOT_RUN), holding its stdout, then
// prints x and exits: the audit's reproduction of a turn that never ends.
const escapeCLI = `setsid env -u JAKEBOT_RUN sleep 30 & sleep 0.5; echo x`

// escapeHandshake does the same, but exits only once the descendant has
// left the group (it writes its pid to $ESCAPED first), so that the
// escape happens on every run, however loaded the machine.
const escapeHandshake = `setsid env -u JAKEBOT_RUN sh -c 'echo $$ >"$ESCAPED.tmp"; mv "$ESCAPED.tmp" "$ESCAPED"; exec sleep 600' &
until [ -s "$ESCAPED" ]; do sleep 0.01; done; echo x; ` + "%s"

// escapeeMarker is plugintest.ProcessMarker, and what still runs with the
// mark when the test ends is killed: a descendant that escaped would
// outlive this test's process.
func escapeeMarker(t *testing.T) (string, func() []plugintest.Process) {
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		for _, p := range alive() {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	})
	return mark, alive
}

// Without a subreaper nothing can find such a descendant, but it no
// longer holds the turn open: once the CLI has exited (by itself, or
// stopped), the reads end after a short grace, with everything the CLI
// wrote read.
func TestEscapedDescendantHoldsNoOutputOpen(t *testing.T) {
	for _, tt := range []struct {
		name   string
		script string
		stop   bool
		pty    *cliproc.TermSize
	}{
		{"the audit's reproduction", escapeCLI, false, nil},
		{"it exits", fmt.Sprintf(escapeHandshake, "exit 0"), false, nil},
		{"it is stopped", fmt.Sprintf(escapeHandshake, "sleep 30"), true, nil},
		{"in a terminal", fmt.Sprintf(escapeHandshake, "exit 0"), false, &cliproc.TermSize{Cols: 80, Rows: 24}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mark, _ := escapeeMarker(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			spec := cliproc.Spec{Bin: "sh", Args: []string{"-c", tt.script}, Environ: os.Environ(),
				Env: []string{mark, "ESCAPED=" + t.TempDir() + "/pid"}, Grace: 200 * time.Millisecond, PTY: tt.pty}
			p, err := cliproc.Start(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			out := bufio.NewReader(p.Stdout)
			if line := readLine(t, out); line != "x" {
				t.Fatalf("the CLI printed %q, want x", line)
			}
			if tt.stop {
				cancel()
			}
			readToEnd(t, out)
			if _, err := p.Wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A descendant that drops its run's mark and moves into the bot's own
// process group, where the orphan sweep does not look (git runs there),
// is still killed when its CLI ends: it cannot get there, the CLI being
// in a session of its own.
func TestDescendantCannotJoinTheBotsGroup(t *testing.T) {
	t.Parallel()
	mark, alive := escapeeMarker(t)
	escaped := t.TempDir() + "/pid"
	script := `env -u JAKEBOT_RUN JAKEBOT_HELPER=joingroup "$0" >/dev/null 2>&1 &
until [ -s "$ESCAPED" ]; do sleep 0.01; done; echo x`
	p, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "sh", Args: []string{"-c", script, os.Args[0]},
		Environ: os.Environ(), Env: []string{mark, "ESCAPED=" + escaped, fmt.Sprintf("JOIN_PGID=%d", syscall.Getpgrp())}})
	if err != nil {
		t.Fatal(err)
	}
	readToEnd(t, p.Stdout)
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if left := alive(); len(left) > 0 {
		said, _ := os.ReadFile(escaped)
		t.Fatalf("processes outlived their CLI: %v (the descendant said: %s)", left, said)
	}
}

// What the CLI wrote just before it exited is read whole when the reads
// are made to end, even though an escaped descendant still holds the
// output open: the end is the end of what is buffered, not a close.
func TestEndingOutputLosesNothing(t *testing.T) {
	t.Parallel()
	mark, _ := escapeeMarker(t)
	// 60 KiB: less than a pipe holds, so the CLI exits with it unread.
	script := fmt.Sprintf(escapeHandshake, `head -c 61440 /dev/zero | tr '\0' y; exit 0`)
	p, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "sh", Args: []string{"-c", script}, Environ: os.Environ(),
		Env: []string{mark, "ESCAPED=" + t.TempDir() + "/pid"}})
	if err != nil {
		t.Fatal(err)
	}
	// Exited: its pid is gone (reaped) or a zombie.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the CLI never exited")
		}
	}
	cliproc.EndOutput(p)
	done := make(chan []byte)
	go func() {
		data, _ := io.ReadAll(p.Stdout)
		done <- data
	}()
	var data []byte
	select {
	case data = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the CLI's output never ended")
	}
	if want := "x\n" + strings.Repeat("y", 61440); string(data) != want {
		t.Fatalf("read %d bytes (%q…), want %d", len(data), data[:min(len(data), 10)], len(want))
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}

// With AdoptOrphans, as jakebot runs, escaped descendants are found by
// parentage and killed when their CLI ends, those of a CLI still running
// are spared, the orphans are reaped, a child that os/exec waits for keeps
// its exit status, and KillAll leaves nothing running. The scenario runs
// in a process of its own (JAKEBOT_HELPER=adopt): a subreaper is one for
// the rest of its life.
func TestAdoptedEscapeesAreKilled(t *testing.T) {
	t.Parallel()
	mark, alive := plugintest.ProcessMarker(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "JAKEBOT_HELPER=adopt", mark, "ESCAPED_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "adopt: ok\n") {
		t.Errorf("adopting helper: %v\n%s", err, out)
	}
	if pids := alive(); len(pids) != 0 {
		for _, p := range pids {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
		t.Fatalf("processes %v outlived their CLI", pids)
	}
}

// adoptScenario is TestAdoptedEscapeesAreKilled's helper process: it
// prints "adopt: ok" when all went as it should.
func adoptScenario() int {
	fail := func(format string, args ...any) int {
		fmt.Printf("adopt: "+format+"\n", args...)
		return 1
	}
	if err := cliproc.AdoptOrphans(context.Background()); err != nil {
		return fail("%v", err)
	}
	// A child os/exec waits for, as git is: it exits at once and stays a
	// zombie, in this process's group, through every reaping below.
	git := exec.Command("sh", "-c", "exit 5")
	if err := git.Start(); err != nil {
		return fail("%v", err)
	}
	// CLI a runs on; the orphan it leaves (its parent subshell exits)
	// keeps a's mark.
	ctxA, stopA := context.WithCancel(context.Background())
	defer stopA()
	a, err := cliproc.Start(ctxA, cliproc.Spec{Bin: "sh", Args: []string{"-c", `(setsid sleep 60 &); sleep 60 & echo started; wait`},
		Environ: os.Environ(), Env: []string{"SCENARIO=a"}, Grace: 200 * time.Millisecond})
	if err != nil {
		return fail("%v", err)
	}
	outA := bufio.NewReader(a.Stdout)
	if line, _ := outA.ReadString('\n'); line != "started\n" {
		return fail("a said %q", line)
	}
	// CLI b leaves a descendant with neither its group nor its mark.
	b, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "sh", Args: []string{"-c", fmt.Sprintf(escapeHandshake, "exit 0")},
		Environ: os.Environ(), Env: []string{"SCENARIO=b", "ESCAPED=" + os.Getenv("ESCAPED_DIR") + "/b"}})
	if err != nil {
		return fail("%v", err)
	}
	io.Copy(io.Discard, b.Stdout)
	if _, err := b.Wait(); err != nil {
		return fail("wait for b: %v", err)
	}
	if n := len(scenario("b")); n != 0 {
		return fail("%d of b's processes outlived it", n)
	}
	if n := len(scenario("a")); n != 3 { // sh, its sleep, the orphan
		return fail("a runs %d processes, want 3: b's end killed a's orphan", n)
	}
	stopA()
	io.Copy(io.Discard, outA)
	if _, err := a.Wait(); err != nil {
		return fail("wait for a: %v", err)
	}
	if n := len(scenario("a")); n != 0 {
		return fail("%d of a's processes outlived it", n)
	}
	// CLI c will not stop: KillAll ends it and what it left.
	c, err := cliproc.Start(context.Background(), cliproc.Spec{Bin: "sh", Args: []string{"-c", fmt.Sprintf(escapeHandshake, `trap "" TERM; sleep 60`)},
		Environ: os.Environ(), Env: []string{"SCENARIO=c", "ESCAPED=" + os.Getenv("ESCAPED_DIR") + "/c"}, Grace: time.Hour})
	if err != nil {
		return fail("%v", err)
	}
	if line, _ := bufio.NewReader(c.Stdout).ReadString('\n'); line != "x\n" {
		return fail("c said %q", line)
	}
	cliproc.KillAll()
	if n := len(scenario("c")); n != 0 {
		return fail("%d of c's processes outlived KillAll", n)
	}
	if _, err := c.Wait(); err != nil {
		return fail("wait for c: %v", err)
	}
	if err := git.Wait(); err == nil || git.ProcessState == nil || git.ProcessState.ExitCode() != 5 {
		return fail("the exec'd child's exit status was taken: %v", err)
	}
	for range 500 { // a failure guard of 10 s, not a timing assertion
		if zombies() == 0 {
			fmt.Println("adopt: ok")
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fail("%d zombies left", zombies())
}

// scenario lists the running (not zombie) processes whose environment
// holds SCENARIO=name.
func scenario(name string) []int {
	needle := "\x00SCENARIO=" + name + "\x00"
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !strings.Contains("\x00"+string(env), needle) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
			var pid int
			fmt.Sscan(e.Name(), &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

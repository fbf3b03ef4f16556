package bot_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/workspace"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// The load curve's runners in processes of their own (JAKEBOT_LOAD_PROCS),
// as they are deployed: the test binary runs again as runner
// JAKEBOT_LOAD_RUNNER, serving synthClaude in JAKEBOT_LOAD_ROOT, on the
// NATS server at JAKEBOT_LOAD_NATS, until its stdin closes.
const (
	loadRunnerEnv = "JAKEBOT_LOAD_RUNNER"
	loadNATSEnv   = "JAKEBOT_LOAD_NATS"
	loadRootEnv   = "JAKEBOT_LOAD_ROOT"
	loadSynthEnv  = "JAKEBOT_LOAD_SYNTH" // events,batch,gap,spread
)

func (s synthClaude) encode() string {
	return fmt.Sprintf("%d,%d,%s,%t", s.events, s.batch, s.gap, s.spread)
}

func decodeSynth(text string) (synthClaude, error) {
	f := strings.Split(text, ",")
	if len(f) != 4 {
		return synthClaude{}, fmt.Errorf("synth %q: want events,batch,gap,spread", text)
	}
	var s synthClaude
	var errs [4]error
	s.events, errs[0] = strconv.Atoi(f[0])
	s.batch, errs[1] = strconv.Atoi(f[1])
	s.gap, errs[2] = time.ParseDuration(f[2])
	s.spread, errs[3] = strconv.ParseBool(f[3])
	for _, err := range errs {
		if err != nil {
			return synthClaude{}, fmt.Errorf("synth %q: %w", text, err)
		}
	}
	return s, nil
}

// runLoadRunner is the test binary as a load runner (TestMain): it
// returns the process's exit code.
func runLoadRunner(name string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	fail := func(err error) int {
		logger.Error("load runner", "runner", name, "err", err)
		return 1
	}
	bot.SetGCPercent() // as jakebot runner does
	fake, err := decodeSynth(os.Getenv(loadSynthEnv))
	if err != nil {
		return fail(err)
	}
	reg, err := core.NewRegistry(fake)
	if err != nil {
		return fail(err)
	}
	roots, err := core.NewRoots([]string{os.Getenv(loadRootEnv)})
	if err != nil {
		return fail(err)
	}
	nc, err := nats.Connect(os.Getenv(loadNATSEnv), remote.RunnerInbox(name))
	if err != nil {
		return fail(err)
	}
	defer nc.Close()
	r, err := remote.NewRunner(nc, remote.RunnerConfig{Name: name, Plugins: reg,
		Workspace: workspace.Machine{Roots: roots}, Interval: 50 * time.Millisecond, Logger: logger})
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin) // until the curve closes it
		cancel()
	}()
	if err := r.Run(ctx); err != nil && ctx.Err() == nil {
		return fail(err)
	}
	return 0
}

// runnerProcess is a load runner the curve started.
type runnerProcess struct {
	cmd *exec.Cmd
}

// startRunnerProcess starts runner name in a process of its own; it
// stops when the benchmark ends.
func startRunnerProcess(b testing.TB, name, url, root string, fake synthClaude) runnerProcess {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), loadRunnerEnv+"="+name, loadNATSEnv+"="+url, loadRootEnv+"="+root,
		loadSynthEnv+"="+fake.encode())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("runner %s: %v", name, err)
		}
	})
	return runnerProcess{cmd: cmd}
}

// cpu is the CPU the process has used so far (user and system), from
// /proc, in clock ticks of 10 ms.
func (p runnerProcess) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name (which may hold spaces): state
	// is the first, utime the 12th and stime the 13th.
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// startRunnerProcesses runs an embedded NATS server, n runners (box1…)
// each in a process of its own serving fake in root, and a gateway that
// has heard them all.
func startRunnerProcesses(b testing.TB, n int, fake synthClaude, root string) (*remote.Gateway, []runnerProcess) {
	url := startNATS(b)
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	gw := startGateway(b, nc, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	var started []runnerProcess
	for i := 1; i <= n; i++ {
		name := "box" + strconv.Itoa(i)
		started = append(started, startRunnerProcess(b, name, url, root, fake))
		waitForRunner(b, gw, name)
	}
	return gw, started
}

// TestARunnerInItsOwnProcess streams turns through a runner in a process
// of its own, as the load curve's JAKEBOT_LOAD_PROCS runs them: every
// reply comes whole and in order.
func TestARunnerInItsOwnProcess(t *testing.T) {
	const conversations = 4
	fake := synthClaude{events: 40, batch: 5}
	lb := newLoadBot(t, 1, fake, true, true)
	if len(lb.runners) != 1 {
		t.Fatalf("%d runner processes, want 1", len(lb.runners))
	}
	for i := range conversations {
		lb.converse(i)
	}
	lb.router.Wait()
	var calls []platformtest.Call
	for _, p := range lb.platforms {
		calls = append(calls, p.calls()...)
	}
	if lost, disordered := checkReplies(t, calls, conversations, fake.events); lost > 0 || disordered > 0 {
		t.Errorf("%d replies lost, %d out of order", lost, disordered)
	}
	if lb.runners[0].cpu() <= 0 {
		t.Error("the runner process's CPU reads as none")
	}
}

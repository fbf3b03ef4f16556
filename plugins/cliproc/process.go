package cliproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// ErrNotFound is returned by Start when the CLI's binary is not on PATH.
var ErrNotFound = errors.New("executable not found")

// Spec says how to start a CLI.
type Spec struct {
	Bin  string
	Args []string
	Dir  string
	// Environ is the environment the CLI starts from. The bot passes its
	// own minus its secrets (see bot.Config.ChildEnv): a CLI must never
	// see a platform token. Nil fails closed: the bot's own without any
	// variable whose name says it holds a credential (core.SecretName),
	// so that a caller who forgets leaks no token; a CLI's own key then
	// comes through Env.
	Environ []string
	// Env is added to Environ; for duplicate keys the last entry wins.
	Env []string
	// Grace is how long the CLI has to exit after SIGTERM before SIGKILL;
	// zero means 5 seconds.
	Grace time.Duration
	// Stdin gives the CLI a pipe for its standard input, written through
	// Process.Stdin; otherwise it reads /dev/null. Not with PTY.
	Stdin bool
	// PTY, when set, runs the CLI in a pseudo-terminal of that size, for
	// CLIs that only behave interactively. Its stdin, stdout and stderr are
	// the terminal: Stdout carries everything written to it, escape
	// sequences included, and Result.Stderr stays empty. The CLI leads a
	// new session whose process group is killed as without a terminal.
	PTY *TermSize
	// Sandbox, when on, runs the CLI behind it: it sees Dir, the git
	// directories Dir's repository uses, the State paths, its install
	// folders and the system, and nothing else of the bot's user.
	Sandbox *Sandbox
	// State lists the CLI's own state paths, found from its environment.
	State StateFunc
}

// TermSize is a terminal's size in character cells.
type TermSize struct {
	Cols, Rows uint16
}

// Process is a running CLI.
type Process struct {
	// Stdout is the CLI's standard output. Read it to EOF, then call Wait.
	Stdout io.Reader
	// Input is the terminal's input side when Spec.PTY is set (a terminal
	// emulator answers the CLI's queries there), and nil otherwise.
	Input io.Writer
	// Stdin is the CLI's standard input when Spec.Stdin is set, and nil
	// otherwise. Close it to send end of file; Wait closes it too.
	Stdin io.WriteCloser

	cmd      *exec.Cmd
	streams  *streams
	stderr   *tail
	errDone  chan struct{}
	exited   chan struct{}
	waitErr  error
	waitOnce sync.Once
	res      Result
	// cleanup removes what the sandbox made for the run.
	cleanup func()
}

// Result is how a CLI ended.
type Result struct {
	// ExitCode is -1 when the process was killed by a signal.
	ExitCode int
	// Stderr is the last lines the CLI wrote to stderr.
	Stderr string
}

var running atomic.Int64

// Running returns how many CLI processes are running now.
func Running() int64 { return running.Load() }

// Start starts the CLI. Without a PTY its stdin is /dev/null: some CLIs
// wait for EOF on a pipe. The returned error wraps ErrNotFound when the
// binary is missing.
func Start(ctx context.Context, s Spec) (*Process, error) {
	path, err := exec.LookPath(s.Bin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Bin, ErrNotFound)
	}
	grace := s.Grace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	cmd := exec.CommandContext(ctx, path, s.Args...)
	cmd.Dir = s.Dir
	base := s.Environ
	if base == nil {
		base = withoutSecrets(os.Environ())
	}
	mark := newMark()
	if s.PTY != nil {
		// The emulator reading the terminal decides what it understands,
		// not the bot's own environment; the spec's Env may still override.
		base = append(slices.Clip(base), "TERM=xterm-256color")
	}
	cmd.Env = append(append(slices.Clip(base), s.Env...), mark)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = grace
	cleanup, err := sandbox(cmd, s)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", s.Bin, err)
	}

	var st *streams
	if s.PTY != nil {
		st, err = openPTY(cmd, *s.PTY)
	} else {
		st, err = openPipes(cmd, s.Stdin)
	}
	if err != nil {
		cleanup()
		return nil, err
	}
	startMu.RLock()
	if err := start(cmd); err != nil {
		startMu.RUnlock()
		st.closeAll()
		cleanup()
		return nil, fmt.Errorf("start %s: %w", s.Bin, err)
	}
	recordCLI(cmd.Process.Pid, mark)
	startMu.RUnlock()
	running.Add(1)
	st.closeChildEnds()
	p := newProcess(cmd, st, s.PTY != nil)
	p.cleanup = cleanup
	go p.wait(mark)
	return p, nil
}

// sandbox puts cmd, made for s, behind s.Sandbox when it is on, and
// returns what removes what the sandbox made for the run.
func sandbox(cmd *exec.Cmd, s Spec) (func(), error) {
	if !s.Sandbox.On() {
		return func() {}, nil
	}
	env := lookupIn(cmd.Env)
	dir := s.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	w := walls{workdir: dir, home: env("HOME"), tmp: env("TMPDIR"), git: gitDirs(dir), install: installDirs(cmd.Path, env("PATH"))}
	if s.State != nil {
		w.state = s.State(env, dir)
	}
	cleanup, err := s.Sandbox.wrap(cmd, w)
	if err != nil {
		return nil, err
	}
	if s.Sandbox.Mode() == SandboxBwrap {
		cmd.Cancel = func() error { return stopInside(cmd.Process.Pid) }
	}
	return cleanup, nil
}

// newProcess is the Process of a CLI started on st, its stderr's tail
// kept as it comes.
func newProcess(cmd *exec.Cmd, st *streams, pty bool) *Process {
	p := &Process{
		Stdout:  st.out,
		cmd:     cmd,
		streams: st,
		stderr:  &tail{max: 8 << 10},
		errDone: make(chan struct{}),
		exited:  make(chan struct{}),
	}
	if pty {
		p.Input = st.out
	}
	if st.in != nil {
		p.Stdin = st.in
	}
	if st.errR != nil {
		go func() {
			io.Copy(p.stderr, st.errR)
			st.errR.Close()
			close(p.errDone)
		}()
	} else {
		close(p.errDone)
	}
	return p
}

// wait waits for the CLI to exit, then ends everything of its run.
func (p *Process) wait(mark string) {
	pid := p.cmd.Process.Pid
	p.waitErr = p.cmd.Wait()
	forgetCLI(pid, mark)
	// The CLI is gone; so must be everything it started: in its process
	// group, carrying its mark, or adopted by this process. This also
	// closes their copies of our pipes, ending the reads.
	killGroup(pid)
	killMarked(mark)
	killEscaped()
	p.cleanup()
	running.Add(-1)
	close(p.exited)
	// Whatever still holds the output (a stranger it was handed to) has
	// outputGrace more before the reads end anyway.
	time.AfterFunc(outputGrace, p.streams.end)
}

// withoutSecrets returns environ without the variables whose names say
// they hold a credential.
func withoutSecrets(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !core.SecretName(k) {
			out = append(out, kv)
		}
	}
	return out
}

// groupGoneWait bounds how long killGroup waits for the killed processes
// to be reaped (by init, as orphans); a zombie runs nothing meanwhile.
const groupGoneWait = 2 * time.Second

// killGroup kills every process left in the group and waits until the
// group is empty, so that "the turn is over" means no process of it runs.
func killGroup(pgid int) {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) {
		return
	}
	deadline := time.Now().Add(groupGoneWait)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) || !groupRunning(pgid) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// groupRunning reports whether a process of group pgid still runs, that
// is exists and is not a zombie waiting to be reaped. Without /proc it
// assumes so.
func groupRunning(pgid int) bool {
	running := false
	ok := eachProcess(func(st procStat) bool {
		running = st.pgrp == pgid && st.state != "Z"
		return !running
	})
	return running || !ok
}

// Pid returns the CLI's process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Wait waits for the CLI to exit and returns how it ended. The error is
// non-nil only when waiting itself failed, not for a non-zero exit.
func (p *Process) Wait() (Result, error) {
	<-p.exited
	<-p.errDone
	p.waitOnce.Do(func() {
		p.streams.out.Close()
		if p.Stdin != nil {
			p.Stdin.Close()
		}
		p.res = Result{ExitCode: p.cmd.ProcessState.ExitCode(), Stderr: p.stderr.String()}
	})
	var exitErr *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &exitErr) && !errors.Is(p.waitErr, exec.ErrWaitDelay) {
		return p.res, p.waitErr
	}
	return p.res, nil
}

// StderrTail returns the last n lines of s, for error messages.
func StderrTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "�")
}

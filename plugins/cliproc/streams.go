package cliproc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// streams are the files connecting the bot to one CLI: the bot's ends,
// read after the start, and the child's ends, closed in the bot once the
// child has them.
type streams struct {
	// out is the bot's end of stdout (a pipe, or the terminal's master,
	// which is also the terminal's input).
	out *output
	// errR is the bot's end of stderr; nil with a terminal.
	errR *output
	// in is the bot's end of stdin when the CLI reads one; nil otherwise.
	in    *os.File
	child []*os.File
}

func (s *streams) closeChildEnds() {
	for _, f := range s.child {
		f.Close()
	}
}

func (s *streams) closeAll() {
	s.closeChildEnds()
	s.out.Close()
	if s.errR != nil {
		s.errR.Close()
	}
	if s.in != nil {
		s.in.Close()
	}
}

// end makes the reads of stdout and stderr end once what is buffered now
// is read (see output.end).
func (s *streams) end() {
	s.out.end()
	if s.errR != nil {
		s.errR.end()
	}
}

// openPipes gives the CLI a session and process group of its own and our
// own pipes, not exec's copying goroutines, so that Wait returns when the
// CLI exits even if something it started still holds them. With stdin,
// the CLI reads a pipe the bot writes; without, /dev/null.
//
// A session, not only a group: a process may join any group of its own
// session, so in the bot's session a descendant could move into the bot's
// group, where neither the CLI's group kill nor the orphan sweep (which
// spares the bot's group, its git children's) would reach it. Without a
// controlling terminal the CLI also cannot read or stop on the console's.
func openPipes(cmd *exec.Cmd, stdin bool) (*streams, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	outR, outW, err := outputPipe("|1")
	if err != nil {
		return nil, err
	}
	errR, errW, err := outputPipe("|2")
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	st := &streams{out: outR, errR: errR, child: []*os.File{outW, errW}}
	if stdin {
		inR, inW, err := pipe()
		if err != nil {
			st.closeAll()
			return nil, err
		}
		cmd.Stdin = inR
		st.in, st.child = inW, append(st.child, inR)
	}
	return st, nil
}

// openPTY makes a terminal the CLI's stdin, stdout and stderr and its
// controlling terminal. A new session also makes the CLI the leader of a
// new process group, so cancelling kills the group as with pipes.
func openPTY(cmd *exec.Cmd, size TermSize) (*streams, error) {
	master, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open a pseudo-terminal: %w", err)
	}
	if err := pty.Setsize(master, &pty.Winsize{Cols: size.Cols, Rows: size.Rows}); err != nil {
		master.Close()
		tty.Close()
		return nil, fmt.Errorf("size the pseudo-terminal: %w", err)
	}
	// The pty package leaves the master blocking; a copy of it goes to
	// the poller, so that end can interrupt its reads.
	fd, err := unix.FcntlInt(master.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	master.Close()
	if err != nil {
		tty.Close()
		return nil, os.NewSyscallError("dup the pseudo-terminal", err)
	}
	out, err := newOutput(fd, "ptmx")
	if err != nil {
		tty.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// Ctty is a descriptor number in the child: stdin.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	return &streams{out: out, child: []*os.File{tty}}, nil
}

// outputPipe is a pipe for the CLI's stdout or stderr: the bot's end is
// read through the poller (see output), the CLI's blocks as usual.
func outputPipe(name string) (r *output, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	w = os.NewFile(uintptr(fds[1]), name)
	if r, err = newOutput(fds[0], name); err != nil {
		w.Close()
		return nil, nil, err
	}
	return r, w, nil
}

// pipe is os.Pipe without the poller, for the CLI's stdin: one goroutine
// writes it and may as well block.
func pipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

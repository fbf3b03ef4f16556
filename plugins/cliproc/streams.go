package cliproc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
)

// streams are the files connecting the bot to one CLI: the bot's ends,
// read after the start, and the child's ends, closed in the bot once the
// child has them.
type streams struct {
	// out is the bot's end of stdout (a pipe, or the terminal's master).
	out *os.File
	// stdout is what Process.Stdout reads: out, or out with the terminal's
	// hang-up read as end of file.
	stdout io.Reader
	// errR is the bot's end of stderr; nil with a terminal.
	errR *os.File
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

// openPipes gives the CLI its own process group and our own pipes, not
// exec's copying goroutines, so that Wait returns when the CLI exits even
// if something it started still holds them. With stdin, the CLI reads a
// pipe the bot writes; without, /dev/null.
func openPipes(cmd *exec.Cmd, stdin bool) (*streams, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, outW, err := pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	st := &streams{out: outR, stdout: outR, errR: errR, child: []*os.File{outW, errW}}
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
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// Ctty is a descriptor number in the child: stdin.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	return &streams{out: master, stdout: hangupReader{master}, child: []*os.File{tty}}, nil
}

// hangupReader reads a terminal's master side. Once every process has
// closed the terminal, Linux fails the read with EIO: that is the end of
// the output.
type hangupReader struct{ f *os.File }

func (h hangupReader) Read(p []byte) (int, error) {
	n, err := h.f.Read(p)
	if err != nil && (errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed)) {
		err = io.EOF
	}
	return n, err
}

// pipe is os.Pipe without the poller: each end is read or written by one
// goroutine (or the child) that may as well block, and registering four
// descriptors with the poller per turn was a measurable part of a turn's
// overhead.
func pipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

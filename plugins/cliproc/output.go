package cliproc

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// outputGrace is how long the bot keeps reading a CLI's output after the
// CLI has exited and what it left behind was killed. Past it, whatever
// still holds the other end (a descendant that escaped both the process
// group and the run's mark, or one that handed its descriptor to a
// stranger) no longer keeps the turn from ending; like os/exec's
// WaitDelay, but without losing what the CLI wrote.
const outputGrace = time.Second

// output is the bot's end of a CLI's stdout or stderr: a pipe or a
// terminal's master side, in non-blocking mode so that end can interrupt
// a read. It is read by one goroutine at a time.
type output struct {
	f   *os.File
	raw syscall.RawConn
	// ending is set by end; left is then how many bytes remain to read.
	ending atomic.Bool
	left   atomic.Int64
}

// newOutput wraps fd, which it sets non-blocking so that the runtime's
// poller owns it: only a polled file's read can be interrupted.
func newOutput(fd int, name string) (*output, error) {
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("set non-blocking", err)
	}
	f := os.NewFile(uintptr(fd), name)
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &output{f: f, raw: raw}, nil
}

// Read reads the output. After end, it returns what was buffered when end
// was called and then io.EOF. A terminal's hang-up (EIO, once every
// process has closed it) and a closed file read as io.EOF too.
func (o *output) Read(p []byte) (int, error) {
	if !o.ending.Load() {
		n, err := o.f.Read(p)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, endOfOutput(err)
		}
	}
	return o.readLeft(p)
}

// readLeft reads what end found buffered, without waiting for more.
func (o *output) readLeft(p []byte) (int, error) {
	left := o.left.Load()
	if left <= 0 || len(p) == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	var n int
	var err error
	if cerr := o.raw.Control(func(fd uintptr) {
		for {
			n, err = syscall.Read(int(fd), p)
			if err != syscall.EINTR {
				return
			}
		}
	}); cerr != nil || err != nil || n <= 0 {
		// Closed, empty after all (a concurrent read took the rest), or
		// hung up: the output is over.
		o.left.Store(0)
		return 0, io.EOF
	}
	o.left.Add(-int64(n))
	return n, nil
}

// end makes the output end once what is buffered now has been read, and
// wakes a read waiting for more (TIOCINQ is FIONREAD: what a pipe or
// terminal holds unread). The CLI has exited by then: every byte
// it wrote is in the buffer, since a writer blocks while the buffer is
// full.
func (o *output) end() {
	var buffered int
	if err := o.raw.Control(func(fd uintptr) {
		buffered, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	}); err != nil {
		return // closed: reading is over already
	}
	o.left.Store(int64(buffered))
	o.ending.Store(true)
	_ = o.f.SetReadDeadline(time.Unix(1, 0))
}

// Write writes to the output's file: a terminal's input, for the PTY.
func (o *output) Write(p []byte) (int, error) { return o.f.Write(p) }

func (o *output) Close() error { return o.f.Close() }

// endOfOutput maps the ways an output ends to io.EOF.
func endOfOutput(err error) error {
	if errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed) {
		return io.EOF
	}
	return err
}

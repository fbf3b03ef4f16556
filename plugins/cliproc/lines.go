package cliproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest stdout line a plugin accepts by default. Real
// lines reach hundreds of kilobytes (a tool result with a whole file).
const MaxLine = 16 << 20

// ErrLineTooLong is returned by LineReader.Next for a line over its limit.
// The line is skipped and reading can go on.
var ErrLineTooLong = errors.New("line too long")

// LineReader reads newline-terminated lines of bounded length. It is not
// safe for concurrent use.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLineReader returns a reader of lines of at most max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its line ending. The slice is valid
// until the next call. At the end of input it returns io.EOF; a last line
// without a newline is returned first, as a line. A line over the limit is
// consumed and reported as an error wrapping ErrLineTooLong.
func (lr *LineReader) Next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	skipped := 0
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if skipped == 0 && len(lr.buf)+len(chunk) <= lr.max+1 {
			lr.buf = append(lr.buf, chunk...)
		} else {
			skipped += len(lr.buf) + len(chunk)
			lr.buf = lr.buf[:0]
		}
		switch {
		case err == nil:
			if skipped > 0 {
				return nil, fmt.Errorf("%w: %d bytes, over the %d byte limit", ErrLineTooLong, skipped, lr.max)
			}
			return trimEOL(lr.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if skipped == 0 && len(lr.buf) > lr.max {
				// A last line has no newline to make room for.
				skipped = len(lr.buf)
				lr.buf = lr.buf[:0]
			}
			if skipped > 0 {
				return nil, fmt.Errorf("%w: %d bytes, over the %d byte limit", ErrLineTooLong, skipped, lr.max)
			}
			if len(lr.buf) > 0 {
				line := lr.buf
				lr.buf = lr.buf[len(lr.buf):]
				return line, nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// eachLine calls line with every line of a CLI's output r until its end.
// A line over MaxLine is skipped and reported through oversized, with
// cli's display name: one line a parser cannot take must not end the
// turn. It returns nil at the end of r, else the read error.
func eachLine(r io.Reader, cli string, line func([]byte), oversized func(msg string)) error {
	lr := NewLineReader(r, MaxLine)
	for {
		b, err := lr.Next()
		switch {
		case err == nil:
			line(b)
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, ErrLineTooLong):
			oversized(cli + " printed an oversized line, skipped (" + err.Error() + ")")
		default:
			return err
		}
	}
}

package cliproc_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// FuzzLineReader checks that any input, read whole or a byte at a time,
// splits into the same lines, none over the limit, and ends with io.EOF.
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"", "a\nb\n", "no newline", "\r\n\r\n", "\x00\xff\n", string(bytes.Repeat([]byte("x"), 100)) + "\nok"} {
		f.Add([]byte(s), 10)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if limit <= 0 || limit > 1<<16 {
			return
		}
		read := func(r io.Reader) []string {
			lr := cliproc.NewLineReader(r, limit)
			var out []string
			for range len(data) + 2 {
				line, err := lr.Next()
				switch {
				case errors.Is(err, io.EOF):
					return out
				case errors.Is(err, cliproc.ErrLineTooLong):
					out = append(out, "<too long>")
				case err != nil:
					t.Fatalf("Next: %v", err)
				default:
					if len(line) > limit {
						t.Fatalf("a line of %d bytes, over the limit of %d", len(line), limit)
					}
					out = append(out, string(line))
				}
			}
			t.Fatalf("no io.EOF after %d lines from %d bytes", len(out), len(data))
			return nil
		}
		whole, bytewise := read(bytes.NewReader(data)), read(iotest.OneByteReader(bytes.NewReader(data)))
		if len(whole) != len(bytewise) {
			t.Fatalf("whole: %q, byte at a time: %q", whole, bytewise)
		}
		for i := range whole {
			if whole[i] != bytewise[i] {
				t.Fatalf("line %d: whole %q, byte at a time %q", i, whole[i], bytewise[i])
			}
		}
	})
}

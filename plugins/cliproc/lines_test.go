package cliproc_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

func TestLineReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	tests := []struct {
		name string
		in   string
		max  int
		want []string // "ERR" marks a line over the limit
	}{
		{"lines", "a\nbb\r\nccc\n", 10, []string{"a", "bb", "ccc"}},
		{"last line without newline", "a\nb", 10, []string{"a", "b"}},
		{"empty lines kept", "\n\na\n", 10, []string{"", "", "a"}},
		{"too long then fine", long + "\nok\n", 50, []string{"ERR", "ok"}},
		{"too long at the end", "ok\n" + long, 50, []string{"ok", "ERR"}},
		{"exactly the limit", long + "\n", 100, []string{long}},
		{"longer than the buffer", strings.Repeat("y", 200<<10) + "\n", 300 << 10, []string{strings.Repeat("y", 200<<10)}},
	}
	for _, tt := range tests {
		for _, reader := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"bytewise", iotest.OneByteReader}} {
			t.Run(tt.name+"/"+reader.name, func(t *testing.T) {
				lr := cliproc.NewLineReader(reader.wrap(strings.NewReader(tt.in)), tt.max)
				var got []string
				for {
					line, err := lr.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if errors.Is(err, cliproc.ErrLineTooLong) {
						got = append(got, "ERR")
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, string(line))
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("lines mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

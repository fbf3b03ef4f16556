package configured_test

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/plugins/configured"
)

func TestScreenText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cols, rows int
		writes     []string
		want       string
	}{
		{"colours and bold are dropped", 40, 5,
			[]string{"\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[m\r\n"}, "red and bold green"},
		{"carriage-return redraw keeps the last state", 40, 5,
			[]string{"progress 10%\rprogress 55%\rprogress 100%\r\n"}, "progress 100%"},
		{"cursor up and erase line redraw", 40, 5,
			[]string{"one\r\ntwo\r\nthree\r\n", "\x1b[3A\x1b[2KONE\r\n"}, "ONE\ntwo\nthree"},
		{"clear screen", 40, 5,
			[]string{"junk\r\n", "\x1b[2J\x1b[Hclean"}, "clean"},
		{"lines that scroll off are kept", 40, 3,
			[]string{"1\r\n2\r\n3\r\n4\r\n5\r\n6"}, "1\n2\n3\n4\n5\n6"},
		{"wrapping at the bottom row scrolls too", 5, 2,
			[]string{"abcdefghijkl\r\n"}, "abcde\nfghij\nkl"},
		{"an escape after the last column is no wrap", 5, 2,
			[]string{"11111\x1b[0m\r\n22222\x1b[0m\r\n33333\x1b[32m\x1b]0;title\x07\r\n4"}, "11111\n22222\n33333\n4"},
		{"UTF-8 cut between reads", 40, 5,
			[]string{"caf\xc3", "\xa9 \xe2\x9c", "\x93 done"}, "café ✓ done"},
		{"blank lines at the ends are trimmed", 40, 6,
			[]string{"\r\n\r\n  indented\r\n\r\nlast\r\n\r\n"}, "  indented\n\nlast"},
		{"leaving the alternate screen restores the main one", 40, 5,
			[]string{"main text\r\n\x1b[?1049h\x1b[Hfull-screen UI\x1b[?1049l"}, "main text"},
		{"a scrolling region turns history off but keeps the screen", 40, 4,
			[]string{"\x1b[2;4rA\r\nB\r\nC\r\nD\r\nE"}, "A\nC\nD\nE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := configured.NewScreen(tt.cols, tt.rows, nil)
			for _, w := range tt.writes {
				s.Write([]byte(w))
			}
			if got := s.Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestScreenSettle checks that a spinner never shows and that a line shows
// once it has stayed the same between two calls.
func TestScreenSettle(t *testing.T) {
	t.Parallel()
	s := configured.NewScreen(60, 10, nil)
	step := func(write, want string) {
		t.Helper()
		s.Write([]byte(write))
		if got := s.Settle(); got != want {
			t.Fatalf("after %q Settle() = %q, want %q", write, got, want)
		}
	}
	// The spinner lives on the cursor's row: nothing settles.
	for _, frame := range []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴"} {
		step("\r\x1b[36m"+frame+"\x1b[0m Thinking…", "")
	}
	// The answer replaces the spinner; it shows once it stood still.
	step("\r\x1b[2KHello, \x1b[1mworld\x1b[0m.\r\n", "")
	step("", "Hello, world.")
	// A progress line below it, redrawn in place on the cursor's row.
	step("Working 1/3", "Hello, world.")
	step("\rWorking 2/3", "Hello, world.")
	step("\r\x1b[2KSecond line.\r\nThird", "Hello, world.")
	step("", "Hello, world.\nSecond line.")
	// A settled row that is redrawn keeps its settled text until the new
	// one stands still.
	step("\x1b[2A\r\x1b[2KHELLO\x1b[2B\r", "Hello, world.\nSecond line.")
	step("", "HELLO\nSecond line.")
	if got, want := s.Text(), "HELLO\nSecond line.\nThird"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}

func TestScreenSettleKeepsScrolledLines(t *testing.T) {
	t.Parallel()
	s := configured.NewScreen(20, 3, nil)
	s.Write([]byte("a\r\nb\r\n"))
	s.Settle()
	if got := s.Settle(); got != "a\nb" {
		t.Fatalf("Settle() = %q, want %q", got, "a\nb")
	}
	s.Write([]byte("c\r\nd\r\ne\r\n"))
	// c scrolled off: it is final. d and e are new on the screen and
	// settle at the next call.
	if got := s.Settle(); got != "a\nb\nc" {
		t.Fatalf("Settle() after scrolling = %q, want %q", got, "a\nb\nc")
	}
	if got := s.Settle(); got != "a\nb\nc\nd\ne" {
		t.Fatalf("Settle() = %q, want every line", got)
	}
}

func TestScreenAnswersQueries(t *testing.T) {
	t.Parallel()
	var answer bytes.Buffer
	s := configured.NewScreen(40, 5, &answer)
	s.Write([]byte("ab\x1b[6n"))
	if got := answer.String(); got != "\x1b[1;3R" {
		t.Errorf("cursor position report = %q, want %q", got, "\x1b[1;3R")
	}
}

// FuzzScreen feeds arbitrary output to the emulator: whatever a CLI
// prints, the screen must not panic and its text must be valid UTF-8.
func FuzzScreen(f *testing.F) {
	for _, s := range []string{
		"\x1b[31mred\x1b[0m\r\n", "\x1b[2;4r\x1b[99;99H\x1b[S\x1b[T", "\x1b]0;title\x07\x1b[6n",
		"\x1b[?1049h\x1b[H\x1b[2J\x1b[?1049l", "\x1b[10000;10000H\x1b[1000@\x1b[1000P\x1b[1000L\x1b[1000M",
		"\t\t\t\t\t\t\t\t\t\t\t\t\x1b[5Z\x08\x08\x1bD\x1bM\x1bE", "\xff\xfe\xc3",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		s := configured.NewScreen(20, 5, io.Discard)
		i := min(int(cut), len(data))
		s.Write(data[:i])
		s.Settle()
		s.Write(data[i:])
		for _, text := range []string{s.Settle(), s.Text()} {
			if !utf8.ValidString(text) {
				t.Fatalf("text %q is not valid UTF-8", text)
			}
		}
	})
}

func BenchmarkScreen(b *testing.B) {
	line := "\x1b[32m" + strings.Repeat("output ", 12) + "\x1b[0m\r\n"
	chunk := []byte(strings.Repeat(line, 100))
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		s := configured.NewScreen(120, 40, nil)
		s.Write(chunk)
		s.Settle()
	}
}

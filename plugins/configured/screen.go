package configured

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/hinshun/vt10x"
)

// maxHistory bounds the lines a Screen keeps after they scroll off; older
// ones are dropped. A chat reply could not show more anyway.
const maxHistory = 5000

// Screen turns what a CLI writes to its terminal into readable text. A
// terminal emulator (vt10x) applies colours, cursor movement, erasing and
// carriage-return redraws, so the text is what a person would see on the
// screen; lines that scroll off the top are kept as history.
//
// Settle returns only the text that has stopped changing, so that a
// spinner or a progress line never turns into a stream of edits. A Screen
// is not safe for concurrent use.
type Screen struct {
	term       vt10x.Terminal
	cols, rows int

	history []string
	// dropped counts history lines dropped beyond maxHistory.
	dropped int
	// partial holds the start of a UTF-8 sequence cut by a read.
	partial []byte
	esc     escState
	// regions is set once the CLI set a scrolling region; lines scrolling
	// out of a region are not taken into the history.
	regions bool
	csiArgs []byte

	// prev is each screen row at the previous Settle, by absolute line
	// number (history lines come first); shown is what Settle returned.
	prev      map[int]string
	shown     []string
	shownBase int
}

// NewScreen returns a screen of cols by rows cells. The emulator's answers
// to the CLI's queries (cursor position, device status) are written to
// answer, which is the terminal's input; nil discards them.
func NewScreen(cols, rows int, answer io.Writer) *Screen {
	if answer == nil {
		answer = io.Discard
	}
	return &Screen{
		term: vt10x.New(vt10x.WithSize(cols, rows), vt10x.WithWriter(answer)),
		cols: cols, rows: rows,
		prev: map[int]string{},
	}
}

// Write feeds terminal output to the emulator. It never fails: should the
// emulator panic on some sequence, the rest of p is dropped and the screen
// goes on.
func (s *Screen) Write(p []byte) (int, error) {
	n := len(p)
	defer func() {
		if recover() != nil {
			s.esc, s.partial = escGround, nil
		}
	}()
	if len(s.partial) > 0 {
		p = append(s.partial, p...)
		s.partial = nil
	}
	for len(p) > 0 {
		if !utf8.FullRune(p) {
			s.partial = append([]byte(nil), p...)
			break
		}
		r, size := utf8.DecodeRune(p)
		if s.scrollsOff(r) {
			s.keep(s.row(0))
		}
		s.track(r)
		s.term.Write(p[:size])
		p = p[size:]
	}
	return n, nil
}

// scrollsOff reports whether writing r scrolls the top row off the
// screen: a line feed, or a printed character that wraps, on the bottom
// row. The emulator gives no hook for scrolling, so we look before each
// character.
func (s *Screen) scrollsOff(r rune) bool {
	if s.regions {
		return false
	}
	cur := s.term.Cursor()
	if cur.Y != s.rows-1 {
		return false
	}
	switch {
	case r == '\n' || r == '\v' || r == '\f':
		return true
	case s.esc == escStart && (r == 'D' || r == 'E'): // IND, NEL
		return true
	case s.esc == escGround && r >= ' ' && r != 0x7f:
		// vt10x marks a cursor that stands past the last column with
		// cursorWrapNext (1<<1): the next character wraps.
		return cur.State&(1<<1) != 0 && s.term.Mode()&vt10x.ModeWrap != 0
	}
	return false
}

// keep appends a line that scrolled off to the history.
func (s *Screen) keep(line string) {
	s.history = append(s.history, line)
	if over := len(s.history) - maxHistory; over > 0 {
		s.history = append(s.history[:0], s.history[over:]...)
		s.dropped += over
	}
}

// escState is just enough of an escape-sequence parser to tell printed
// characters from the bytes of a sequence.
type escState int

const (
	escGround escState = iota
	escStart           // after ESC
	escInter           // after ESC and an intermediate byte, such as ESC (
	escCSI             // ESC [ … final byte
	escString          // OSC, DCS, APC, PM: until BEL or ESC \
)

func (s *Screen) track(r rune) {
	switch s.esc {
	case escGround:
		if r == 0x1b {
			s.esc = escStart
		}
	case escStart:
		switch {
		case r == '[':
			s.esc, s.csiArgs = escCSI, s.csiArgs[:0]
		case r == ']' || r == 'P' || r == '_' || r == '^' || r == 'X' || r == 'k':
			s.esc = escString
		case r >= 0x20 && r <= 0x2f:
			s.esc = escInter
		default:
			s.esc = escGround
		}
	case escInter:
		s.esc = escGround
	case escCSI:
		switch {
		case r == 0x1b:
			s.esc = escStart
		case r >= 0x40 && r <= 0x7e:
			s.esc = escGround
			// DECSTBM with anything but the whole screen sets a region.
			if r == 'r' && len(s.csiArgs) > 0 && string(s.csiArgs) != "1;"+itoa(s.rows) {
				s.regions = true
			}
		case r == 0x18 || r == 0x1a: // CAN, SUB
			s.esc = escGround
		default:
			if len(s.csiArgs) < 32 {
				s.csiArgs = append(s.csiArgs, byte(r))
			}
		}
	case escString:
		switch r {
		case 0x07:
			s.esc = escGround
		case 0x1b:
			s.esc = escStart
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// row returns the text of screen row y without trailing blanks.
func (s *Screen) row(y int) string {
	var b strings.Builder
	for x := 0; x < s.cols; x++ {
		c := s.term.Cell(x, y).Char
		if c == 0 {
			c = ' '
		}
		b.WriteRune(c)
	}
	return strings.TrimRight(b.String(), " ")
}

func (s *Screen) rowsNow() []string {
	s.term.Lock()
	defer s.term.Unlock()
	rows := make([]string, s.rows)
	for y := range rows {
		rows[y] = s.row(y)
	}
	return rows
}

// Settle returns the text that has settled: the history, then each screen
// row above the cursor's that is the same as at the previous call. A row
// that changed, and every row from the cursor's down (where spinners and
// progress redraws live), keeps the text it settled with before; the text
// stops at the first such row that never settled. Text has the rest.
func (s *Screen) Settle() string {
	rows := s.rowsNow()
	cy := s.term.Cursor().Y
	base := s.dropped + len(s.history)
	out := append([]string(nil), s.history...)
rows:
	for y := range rows {
		abs := base + y
		old, seen := s.prev[abs]
		switch i := abs - s.shownBase; {
		case y < cy && seen && old == rows[y]:
			out = append(out, rows[y])
		case i >= 0 && i < len(s.shown):
			out = append(out, s.shown[i])
		default:
			break rows // a row that never settled
		}
	}
	clear(s.prev)
	for y, r := range rows {
		s.prev[base+y] = r
	}
	s.shown, s.shownBase = out, s.dropped
	return join(out)
}

// Text returns everything on the screen and in the history, settled or
// not: the final text once the CLI has exited.
func (s *Screen) Text() string {
	return join(append(append([]string(nil), s.history...), s.rowsNow()...))
}

// join joins lines, leaving out blank lines at either end.
func join(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

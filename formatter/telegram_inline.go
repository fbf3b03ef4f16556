package formatter

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// inlineHTML renders one line of a model's markdown as Telegram HTML and
// returns it with the text Telegram will show. Spans never cross lines, so
// the HTML of every line is balanced on its own; markup that does not
// close on its line stays as it was written.
func inlineHTML(line string) (htmlText, plain string) {
	var w inlineWriter
	if m := headingRE.FindStringSubmatch(line); m != nil {
		w.wrap("<b>", "</b>", m[1])
	} else if m := bulletRE.FindStringSubmatch(line); m != nil {
		w.text(m[1] + "• ")
		w.run(m[2])
	} else {
		w.run(line)
	}
	return w.h.String(), w.p.String()
}

var (
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	bulletRE  = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	linkRE    = regexp.MustCompile(`^\[([^\]]+)\]\((https?://[^\s()]+)\)`)
)

// inlineWriter builds a line's HTML and its visible text side by side.
type inlineWriter struct {
	h, p strings.Builder
}

// text writes s as it is shown.
func (w *inlineWriter) text(s string) {
	w.h.WriteString(escapeHTML(s))
	w.p.WriteString(s)
}

func (w *inlineWriter) wrap(open, close, inner string) {
	w.h.WriteString(open)
	w.run(inner)
	w.h.WriteString(close)
}

// spans maps markdown delimiters to tags, longest first.
var spans = []struct{ delim, open, close string }{
	{"**", "<b>", "</b>"},
	{"__", "<b>", "</b>"},
	{"~~", "<s>", "</s>"},
	{"*", "<i>", "</i>"},
	{"_", "<i>", "</i>"},
}

func (w *inlineWriter) run(s string) {
	for i := 0; i < len(s); {
		if n := w.special(s, i); n > 0 {
			i += n
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		w.text(s[i : i+size])
		i += size
	}
}

// special renders the markup starting at s[i], if any, and returns how
// many bytes it used.
func (w *inlineWriter) special(s string, i int) int {
	switch c := s[i]; c {
	case '\\':
		if i+1 < len(s) && strings.IndexByte("\\`*_~[]()#+-.!>", s[i+1]) >= 0 {
			w.text(s[i+1 : i+2])
			return 2
		}
	case '`':
		ticks := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		delim := s[i : i+ticks]
		if j := strings.Index(s[i+ticks:], delim); j > 0 {
			code := s[i+ticks : i+ticks+j]
			if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' {
				code = code[1 : len(code)-1]
			}
			w.h.WriteString("<code>" + escapeHTML(code) + "</code>")
			w.p.WriteString(code)
			return 2*ticks + j
		}
	case '[':
		if m := linkRE.FindStringSubmatch(s[i:]); m != nil {
			w.h.WriteString(`<a href="` + escapeHTML(m[2]) + `">`)
			w.run(m[1])
			w.h.WriteString("</a>")
			return len(m[0])
		}
	case '*', '_', '~':
		for _, sp := range spans {
			if !strings.HasPrefix(s[i:], sp.delim) || !canOpen(s, i, sp.delim) {
				continue
			}
			if k := findClose(s, i+len(sp.delim), sp.delim); k > 0 {
				w.wrap(sp.open, sp.close, s[i+len(sp.delim):k])
				return k + len(sp.delim) - i
			}
		}
	}
	return 0
}

// canOpen reports whether delim at s[i] can open a span: it follows the
// start or a non-word character and precedes a non-space, so that
// snake_case and 2*3*4 stay as they are.
func canOpen(s string, i int, delim string) bool {
	after := i + len(delim)
	if after >= len(s) || s[after] == ' ' || s[after] == delim[0] {
		return false
	}
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWord(r)
}

// findClose returns the index of the delimiter closing a span whose
// content starts at from, or -1. The closing delimiter follows a non-space
// and precedes the end or a non-word character.
func findClose(s string, from int, delim string) int {
	for k := from + 1; k+len(delim) <= len(s); k++ {
		if !strings.HasPrefix(s[k:], delim) || s[k-1] == ' ' || s[k-1] == delim[0] {
			continue
		}
		end := k + len(delim)
		if end < len(s) {
			if s[end] == delim[0] {
				continue
			}
			if r, _ := utf8.DecodeRuneInString(s[end:]); isWord(r) {
				continue
			}
		}
		return k
	}
	return -1
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

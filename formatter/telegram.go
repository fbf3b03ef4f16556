package formatter

import (
	"html"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
)

// TelegramLimit is the longest message Telegram accepts: 4096 UTF-16 code
// units of the text as it is after the HTML entities are parsed.
const TelegramLimit = 4096

// Telegram renders blocks as messages in Telegram's HTML parse mode, each of
// at most limit UTF-16 units of visible text.
//
// The blocks are first broken into lines whose HTML is balanced on its own
// (a bold span never crosses a line) and code blocks; the lines are split
// into pages by their visible length, and only then is each page put
// together, wrapping its share of a code block in <pre><code>. So a split
// never falls inside a tag, a code block that fits on a page is moved whole
// to the next page rather than cut, and a longer one is closed at the end of
// a page and reopened, with its language, on the next.
func Telegram(blocks []core.ResponseBlock, limit int) []string {
	var ls tgLines
	for i, bl := range blocks {
		if i > 0 && separator(blocks[i-1], bl) == "\n\n" {
			ls.blank()
		}
		ls.block(bl)
	}
	return paginate(ls.cut(limit), limit, "\n")
}

// TelegramPlain turns a message rendered by Telegram back into plain text,
// for resending when Telegram refuses its entities.
func TelegramPlain(s string) string {
	return html.UnescapeString(tagRE.ReplaceAllString(s, ""))
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// tgLine is one line of a message: prose rendered to HTML, or a raw line of
// a code block.
type tgLine struct {
	html  string
	plain string // the text Telegram shows, for counting
	code  int    // the 1-based code block the line belongs to, or 0
	lang  string
	// src is the unrendered prose, kept so an over-long line can be cut
	// before it is rendered.
	src string
}

type tgLines struct {
	lines []tgLine
	codes int
}

func (ls *tgLines) blank() { ls.lines = append(ls.lines, tgLine{}) }

// prose adds markdown lines, each rendered on its own.
func (ls *tgLines) prose(text string) {
	for _, l := range strings.Split(text, "\n") {
		ls.lines = append(ls.lines, proseLine(l))
	}
}

// html adds lines that are already HTML, with their visible text.
func (ls *tgLines) html(prefixHTML, prefixPlain, text, open, close string) {
	for i, l := range strings.Split(text, "\n") {
		h, p := escapeHTML(l), l
		if i == 0 {
			h, p = prefixHTML+h, prefixPlain+p
		}
		ls.lines = append(ls.lines, tgLine{html: open + h + close, plain: p})
	}
}

func (ls *tgLines) codeBlock(lang, text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	ls.codes++
	for _, l := range strings.Split(text, "\n") {
		ls.lines = append(ls.lines, tgLine{html: escapeHTML(l), plain: l, code: ls.codes, lang: lang})
	}
}

func (ls *tgLines) block(bl core.ResponseBlock) {
	switch bl.Kind {
	case core.BlockText:
		ls.markdown(strings.TrimRight(bl.Text, "\n"))
	case core.BlockCode:
		ls.codeBlock(bl.Language, bl.Text)
	case core.BlockDiff:
		ls.lines = append(ls.lines, tgLine{
			html:  "📝 " + actionWord(bl.Action) + " <code>" + escapeHTML(bl.Path) + "</code>" + diffCounts(bl.Text),
			plain: "📝 " + actionWord(bl.Action) + " " + bl.Path + diffCounts(bl.Text),
		})
		ls.codeBlock("diff", shownDiff(bl.Text))
	case core.BlockToolUse:
		ls.html("", "", ToolLine(bl), "", "")
	case core.BlockError:
		ls.html("❌ <b>Error:</b> ", "❌ Error: ", bl.Text, "", "")
	case core.BlockWarning:
		ls.html("⚠️ ", "⚠️ ", bl.Text, "", "")
	case core.BlockStatus:
		ls.html("", "", bl.Text, "<i>", "</i>")
	case core.BlockFooter:
		ls.html("— ", "— ", FooterText(bl), "<i>", "</i>")
	default:
		ls.html("", "", bl.Text, "", "")
	}
}

var fenceRE = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([\\w+#.-]*)")

// markdown adds a model's markdown: fenced code blocks become code lines,
// everything else prose. A fence still open at the end (a reply being
// streamed) holds code all the same.
func (ls *tgLines) markdown(text string) {
	var prose, code []string
	fence, lang := "", ""
	for _, l := range strings.Split(text, "\n") {
		m := fenceRE.FindStringSubmatch(l)
		switch {
		case fence == "" && m != nil:
			ls.flushProse(&prose)
			fence, lang = m[1], m[2]
		case fence != "" && m != nil && strings.HasPrefix(m[1], fence) && m[2] == "":
			ls.codeBlock(lang, strings.Join(code, "\n"))
			code, fence = nil, ""
		case fence != "":
			code = append(code, l)
		default:
			prose = append(prose, l)
		}
	}
	ls.flushProse(&prose)
	if fence != "" {
		ls.codeBlock(lang, strings.Join(code, "\n"))
	}
}

func (ls *tgLines) flushProse(prose *[]string) {
	if len(*prose) > 0 {
		ls.prose(strings.Join(*prose, "\n"))
	}
	*prose = nil
}

func proseLine(src string) tgLine {
	h, p := inlineHTML(src)
	return tgLine{html: h, plain: p, src: src}
}

// cut breaks every line longer than limit into lines that fit. Prose is cut
// in its markdown source, at a space where there is one, and rendered
// again, so no tag is ever cut; rendering only removes visible characters,
// so the pieces fit.
func (ls *tgLines) cut(limit int) []tgLine {
	var out []tgLine
	for _, l := range ls.lines {
		if utf16Len(l.plain) <= limit {
			out = append(out, l)
			continue
		}
		if l.code > 0 {
			for _, piece := range cutUTF16(l.plain, limit, false) {
				out = append(out, tgLine{html: escapeHTML(piece), plain: piece, code: l.code, lang: l.lang})
			}
			continue
		}
		src := l.src
		if src == "" { // an HTML line: cut its visible text
			src = l.plain
		}
		for _, piece := range cutUTF16(src, limit, true) {
			if l.src != "" {
				out = append(out, proseLine(piece))
			} else {
				out = append(out, tgLine{html: escapeHTML(piece), plain: piece})
			}
		}
	}
	return out
}

// paginate packs lines into pages of at most limit visible units, counting
// the newline between two lines; lineBreak is what separates two prose
// lines in a page's HTML.
func paginate(lines []tgLine, limit int, lineBreak string) []string {
	var pages []string
	var page []tgLine
	size := 0
	flush := func() {
		for len(page) > 0 && isBlank(page[len(page)-1]) {
			page = page[:len(page)-1]
		}
		// Telegram refuses a message with nothing to show.
		visible := false
		for _, l := range page {
			visible = visible || strings.TrimSpace(l.plain) != ""
		}
		if visible {
			pages = append(pages, assemble(page, lineBreak))
		}
		page, size = nil, 0
	}
	for i, l := range lines {
		if len(page) == 0 && isBlank(l) {
			continue // no page starts with a blank line
		}
		n := utf16Len(l.plain)
		need := n
		if len(page) > 0 {
			need++
		}
		// A code block that fits on a page of its own starts one rather
		// than being cut.
		if l.code > 0 && (i == 0 || lines[i-1].code != l.code) && len(page) > 0 {
			whole := codeSize(lines[i:])
			if size+1+whole > limit && whole <= limit {
				flush()
				need = n
			}
		}
		if size+need > limit {
			flush()
			need = n
		}
		page = append(page, l)
		size += need
	}
	flush()
	return pages
}

// isBlank reports whether l is a prose line showing nothing.
func isBlank(l tgLine) bool { return l.code == 0 && strings.TrimSpace(l.plain) == "" }

// codeSize is the visible length of the code block lines starts with.
func codeSize(lines []tgLine) int {
	n := -1
	for _, l := range lines {
		if l.code != lines[0].code {
			break
		}
		n += 1 + utf16Len(l.plain)
	}
	return n
}

// assemble joins a page's lines, wrapping each run of one code block's
// lines in <pre><code>. Prose lines are joined by lineBreak, any other
// by a newline.
func assemble(page []tgLine, lineBreak string) string {
	var b strings.Builder
	for i, l := range page {
		// A <pre> is a block of its own: no break beside one.
		if i > 0 && (l.code > 0 || page[i-1].code > 0) {
			b.WriteByte('\n')
		} else if i > 0 {
			b.WriteString(lineBreak)
		}
		if l.code > 0 && (i == 0 || page[i-1].code != l.code) {
			b.WriteString("<pre>")
			if l.lang != "" {
				b.WriteString(`<code class="language-` + escapeHTML(l.lang) + `">`)
			} else {
				b.WriteString("<code>")
			}
		}
		b.WriteString(l.html)
		if l.code > 0 && (i == len(page)-1 || page[i+1].code != l.code) {
			b.WriteString("</code></pre>")
		}
	}
	return b.String()
}

// escapeHTML escapes the three characters Telegram requires escaped, and
// the double quote for attributes.
func escapeHTML(s string) string { return htmlEscaper.Replace(s) }

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// utf16Len counts s the way Telegram does, in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// cutUTF16 splits s into pieces of at most limit UTF-16 units, never inside
// a character. With atSpace it cuts after the last space of a piece when
// there is one in its second half.
func cutUTF16(s string, limit int, atSpace bool) []string {
	var out []string
	for utf16Len(s) > limit {
		end, n, space := 0, 0, -1
		for end < len(s) {
			r, size := utf8.DecodeRuneInString(s[end:])
			w := 1
			if r >= 0x10000 {
				w = 2
			}
			if n+w > limit {
				break
			}
			n += w
			end += size
			if r == ' ' && n > limit/2 {
				space = end
			}
		}
		if atSpace && space > 0 {
			end = space
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return append(out, s)
}

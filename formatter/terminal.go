package formatter

import (
	"regexp"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// StripControl removes the C0 and C1 control characters except newline and
// tab (ESC, BEL, CR, DEL, U+0080–U+009F) so that model text cannot move the
// cursor, retitle the window or write the clipboard (OSC 52) of the
// terminal it is printed on. What is left of a sequence after its ESC is
// printable and harmless.
func StripControl(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return -1
		}
		return r
	}, s)
}

// Terminal renders blocks for the console, model text stripped of control
// characters. Without color it is MarkdownText exactly, so that piped
// output stays plain and scriptable; with color, markdown emphasis and the
// block kinds are shown with ANSI styles added after stripping.
func Terminal(blocks []core.ResponseBlock, color bool) string {
	clean := make([]core.ResponseBlock, len(blocks))
	for i, bl := range blocks {
		bl.Text = StripControl(bl.Text)
		bl.Tool = StripControl(bl.Tool)
		bl.Detail = StripControl(bl.Detail)
		bl.Path = StripControl(bl.Path)
		bl.Language = StripControl(bl.Language)
		clean[i] = bl
	}
	if !color {
		return MarkdownText(clean)
	}
	return join(clean, writeTerminalBlock)
}

// SGR styles; each is closed with a full reset so that a style never
// leaks into the next line or the user's prompt.
const (
	sgrBold   = "\x1b[1m"
	sgrDim    = "\x1b[2m"
	sgrItalic = "\x1b[3m"
	sgrRed    = "\x1b[31m"
	sgrYellow = "\x1b[33m"
	sgrCyan   = "\x1b[36m"
	sgrReset  = "\x1b[0m"
)

func style(sgr, s string) string { return sgr + s + sgrReset }

func writeTerminalBlock(b *strings.Builder, bl core.ResponseBlock) {
	switch bl.Kind {
	case core.BlockText:
		b.WriteString(terminalProse(strings.TrimRight(bl.Text, "\n")))
	case core.BlockCode:
		b.WriteString(terminalCode(bl.Language, bl.Text))
	case core.BlockDiff:
		b.WriteString(style(sgrBold, "📝 "+actionWord(bl.Action)+" "+bl.Path+diffCounts(bl.Text)))
		if bl.Text != "" {
			b.WriteString("\n" + terminalCode("diff", bl.Text))
		}
	case core.BlockToolUse:
		b.WriteString(style(sgrDim, ToolLine(bl)))
	case core.BlockError:
		b.WriteString(style(sgrRed+sgrBold, "❌ Error: ") + style(sgrRed, bl.Text))
	case core.BlockWarning:
		b.WriteString(style(sgrYellow, "⚠️ "+bl.Text))
	case core.BlockStatus:
		b.WriteString(style(sgrDim+sgrItalic, bl.Text))
	case core.BlockFooter:
		b.WriteString(style(sgrDim, "— "+FooterText(bl)))
	default:
		b.WriteString(bl.Text)
	}
}

// terminalCode shows a code block's lines in cyan with a dim language
// label in place of the fences.
func terminalCode(lang, text string) string {
	var b strings.Builder
	if lang != "" {
		b.WriteString(style(sgrDim, lang) + "\n")
	}
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(style(sgrCyan, "  "+line))
	}
	return b.String()
}

var (
	termBold   = regexp.MustCompile(`\*\*([^*\n]+)\*\*`)
	termInline = regexp.MustCompile("`([^`\n]+)`")
	termHead   = regexp.MustCompile(`^#{1,6} +(.*)$`)
)

// terminalProse styles markdown prose: fenced code as code blocks (an
// unclosed fence, as while streaming, runs to the end), headings and
// **bold** in bold, `code` in cyan.
func terminalProse(text string) string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if lang, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
				j++
			}
			out = append(out, terminalCode(lang, strings.Join(lines[i+1:min(j, len(lines))], "\n")))
			i = j
			continue
		}
		if m := termHead.FindStringSubmatch(line); m != nil {
			out = append(out, style(sgrBold, m[1]))
			continue
		}
		line = termInline.ReplaceAllString(line, sgrCyan+"$1"+sgrReset)
		line = termBold.ReplaceAllString(line, sgrBold+"$1"+sgrReset)
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

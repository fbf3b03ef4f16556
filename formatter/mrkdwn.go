package formatter

import (
	"regexp"
	"strings"
)

// SlackMrkdwn converts the markdown a model writes into Slack's mrkdwn:
// **bold** becomes *bold*, *italic* becomes _italic_, ~~strike~~ becomes
// ~strike~, [text](url) becomes <url|text>, headings become bold lines,
// bullets become •, fenced code loses its language tag, and &, < and >
// are escaped everywhere except in the links it writes. A fence left open
// (a reply still streaming) is closed, so the partial text renders.
func SlackMrkdwn(md string) string {
	var out []string
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			out = append(out, "```")
			continue
		}
		if inFence {
			out = append(out, SlackEscape(line))
			continue
		}
		out = append(out, mrkdwnLine(line))
	}
	if inFence {
		out = append(out, "```")
	}
	return strings.Join(out, "\n")
}

var (
	headingRe = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	bulletRe  = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	quoteRe   = regexp.MustCompile(`^\s{0,3}>\s?(.*)$`)
	ruleRe    = regexp.MustCompile(`^\s{0,3}(-(\s*-){2,}|\*(\s*\*){2,}|_(\s*_){2,})\s*$`)
)

func mrkdwnLine(line string) string {
	if ruleRe.MatchString(line) {
		return "──────────"
	}
	if m := headingRe.FindStringSubmatch(line); m != nil {
		text := strings.ReplaceAll(strings.ReplaceAll(m[1], "**", ""), "__", "")
		return "*" + mrkdwnInline(text) + "*"
	}
	if m := quoteRe.FindStringSubmatch(line); m != nil {
		// Slack reads a leading > as a quote, so it stays unescaped.
		return "> " + mrkdwnLine(m[1])
	}
	if m := bulletRe.FindStringSubmatch(line); m != nil {
		return m[1] + "• " + mrkdwnInline(m[2])
	}
	return mrkdwnInline(line)
}

// mrkdwnInline converts one line's inline markup.
func mrkdwnInline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		n := inlineToken(&b, s, i)
		if n == 0 {
			b.WriteString(SlackEscape(s[i : i+1]))
			n = 1
		}
		i += n
	}
	return b.String()
}

// inlineToken writes the markup that starts at s[i], if any, and returns
// how many bytes it consumed; 0 means s[i] is an ordinary character.
func inlineToken(b *strings.Builder, s string, i int) int {
	rest := s[i:]
	switch s[i] {
	case '`':
		ticks := len(rest) - len(strings.TrimLeft(rest, "`"))
		end := strings.Index(rest[ticks:], rest[:ticks])
		if end < 0 {
			b.WriteString(rest[:ticks])
			return ticks
		}
		b.WriteString("`" + SlackEscape(rest[ticks:ticks+end]) + "`")
		return 2*ticks + end
	case '\\':
		if len(rest) > 1 && strings.ContainsRune("\\`*_{}[]()#+-.!~|<>&", rune(rest[1])) {
			b.WriteString(SlackEscape(rest[1:2]))
			return 2
		}
	case '!':
		if strings.HasPrefix(rest, "![") {
			if n := link(b, s, i+1); n > 0 {
				return n + 1
			}
		}
	case '[':
		return link(b, s, i)
	case '<':
		if end := strings.IndexByte(rest, '>'); end > 0 && isURL(rest[1:end]) {
			b.WriteString("<" + slackURL(rest[1:end]) + ">")
			return end + 1
		}
	case '*', '_':
		if len(rest) > 1 && rest[1] == rest[0] {
			return emphasis(b, s, i, rest[:2], "*")
		}
		if s[i] == '*' {
			return emphasis(b, s, i, "*", "_")
		}
	case '~':
		if strings.HasPrefix(rest, "~~") {
			return emphasis(b, s, i, "~~", "~")
		}
	}
	return 0
}

// emphasis converts a span delimited by marker on both sides into one
// delimited by to. Like CommonMark, the opening marker must be followed,
// and the closing one preceded, by a non-space, so "2 * 3 * 4" stays.
func emphasis(b *strings.Builder, s string, i int, marker, to string) int {
	start := i + len(marker)
	// Underscores inside words (snake_case, __init__ in a path) are not
	// markup.
	intraword := marker[0] == '_'
	if start >= len(s) || s[start] == ' ' || (intraword && i > 0 && isWordByte(s[i-1])) {
		return 0
	}
	for j := start + 1; j+len(marker) <= len(s); j++ {
		if s[j:j+len(marker)] != marker || s[j-1] == ' ' {
			continue
		}
		if intraword && j+len(marker) < len(s) && isWordByte(s[j+len(marker)]) {
			continue
		}
		// A single * must not close on half of a **.
		if len(marker) == 1 && j+1 < len(s) && s[j+1] == marker[0] {
			j++
			continue
		}
		b.WriteString(to + mrkdwnInline(s[start:j]) + to)
		return j + len(marker) - i
	}
	return 0
}

// link converts [text](url) at s[i] into <url|text>.
func link(b *strings.Builder, s string, i int) int {
	rest := s[i:]
	mid := strings.Index(rest, "](")
	if mid < 0 {
		return 0
	}
	end := strings.IndexByte(rest[mid:], ')')
	if end < 0 {
		return 0
	}
	text, url := rest[1:mid], strings.TrimSpace(rest[mid+2:mid+end])
	if title := strings.IndexByte(url, ' '); title > 0 {
		url = url[:title] // [text](url "title")
	}
	if !isURL(url) {
		// Only web and mail links become Slack links: <!channel|x>,
		// <@U123|x> or <#C1|x> from model text would ping people.
		return 0
	}
	text = strings.NewReplacer("|", "¦", "**", "", "`", "").Replace(text)
	if text == "" {
		text = url
	}
	b.WriteString("<" + slackURL(url) + "|" + SlackEscape(text) + ">")
	return mid + end + 1
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isURL(s string) bool {
	return !strings.ContainsAny(s, " <") && (strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "mailto:"))
}

// slackURL makes url safe inside <…>: & is escaped like everywhere, and
// the characters that would end the control sequence are percent-encoded.
func slackURL(url string) string {
	return strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C").Replace(url)
}

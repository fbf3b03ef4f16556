package formatter

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
)

// SlackLimit is the length, in runes, at which a Slack reply continues in
// a new message. Slack documents 40,000 characters but refuses messages
// with msg_too_long near 4,000, so pages stay well below that.
const SlackLimit = 3500

// Slack renders blocks in Slack's mrkdwn, split into pages of at most limit
// runes each (limit should be a few dozen runes at least).
func Slack(blocks []core.ResponseBlock, limit int) []string {
	return SplitSlack(SlackText(blocks), limit)
}

// SplitSlack splits mrkdwn text like SplitMarkdown, but never inside one
// of SlackEscape's entities.
func SplitSlack(text string, limit int) []string {
	return SplitMarkdown(wrapLongLines(text, limit-len("```\n\n```")), limit)
}

// SlackText renders blocks as one mrkdwn text.
func SlackText(blocks []core.ResponseBlock) string { return join(blocks, writeSlackBlock) }

func writeSlackBlock(b *strings.Builder, bl core.ResponseBlock) {
	switch bl.Kind {
	case core.BlockText:
		b.WriteString(SlackMrkdwn(strings.TrimRight(bl.Text, "\n")))
	case core.BlockCode:
		writeSlackFence(b, bl.Text)
	case core.BlockDiff:
		fmt.Fprintf(b, "📝 %s `%s`%s", actionWord(bl.Action), SlackEscape(bl.Path), diffCounts(bl.Text))
		if bl.Text != "" {
			b.WriteString("\n")
			writeSlackFence(b, shownDiff(bl.Text))
		}
	case core.BlockToolUse:
		b.WriteString(slackToolLine(bl))
	case core.BlockError:
		b.WriteString("❌ *Error:* " + SlackEscape(bl.Text))
	case core.BlockWarning:
		b.WriteString("⚠️ " + SlackEscape(bl.Text))
	case core.BlockStatus:
		b.WriteString(slackItalic(SlackEscape(bl.Text)))
	case core.BlockFooter:
		b.WriteString("_— " + FooterText(bl) + "_")
	default:
		b.WriteString(SlackEscape(bl.Text))
	}
}

// writeSlackFence writes a code block. Slack ignores language tags (it
// would show them as the first line), so there is none.
func writeSlackFence(b *strings.Builder, code string) {
	b.WriteString("```\n")
	b.WriteString(SlackEscape(strings.TrimRight(code, "\n")))
	b.WriteString("\n```")
}

// slackToolLine is ToolLine with the tool's name in bold, so a run of tool
// lines reads at a glance.
func slackToolLine(bl core.ResponseBlock) string {
	return toolLine(bl, func(s string) string { return "*" + SlackEscape(s) + "*" }, SlackEscape)
}

// slackItalic italicises one line; Slack's _…_ does not span lines.
func slackItalic(s string) string {
	if s == "" || strings.Contains(s, "\n") {
		return s
	}
	return "_" + s + "_"
}

// SlackEscape escapes the three characters Slack reserves for its control
// sequences.
func SlackEscape(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return slackEscaper.Replace(s)
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// wrapLongLines breaks lines longer than width runes, between words where
// it can and never inside one of SlackEscape's entities. SplitMarkdown would cut such lines anyway, but
// between any two runes.
func wrapLongLines(s string, width int) string {
	if width < 8 || utf8.RuneCountInString(s) <= width {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		var parts []string
		for utf8.RuneCountInString(line) > width {
			head, tail := cutRunes(line, width)
			// Prose breaks between words when there is a space near the end.
			if sp := strings.LastIndexByte(head, ' '); sp > len(head)*3/4 {
				head, tail = head[:sp+1], head[sp+1:]+tail
			}
			if amp := strings.LastIndexByte(head, '&'); amp > 0 && len(head)-amp < len("&amp;") && !strings.Contains(head[amp:], ";") {
				head, tail = head[:amp], head[amp:]+tail
			}
			parts = append(parts, head)
			line = tail
		}
		if parts != nil {
			lines[i] = strings.Join(append(parts, line), "\n")
		}
	}
	return strings.Join(lines, "\n")
}

package formatter

import (
	"fmt"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core"
)

// Markdown renders blocks as CommonMark-style markdown (Discord's dialect
// and the console's), split into pages of at most limit runes.
func Markdown(blocks []core.ResponseBlock, limit int) []string {
	return SplitMarkdown(MarkdownText(blocks), limit)
}

// MarkdownText renders blocks as one markdown text.
func MarkdownText(blocks []core.ResponseBlock) string {
	var b strings.Builder
	for i, bl := range blocks {
		if i > 0 {
			b.WriteString(separator(blocks[i-1], bl))
		}
		writeMarkdownBlock(&b, bl)
	}
	return b.String()
}

// separator puts prose apart from what surrounds it, and keeps runs of
// tool lines together.
func separator(prev, next core.ResponseBlock) string {
	if isLine(prev) && isLine(next) {
		return "\n"
	}
	return "\n\n"
}

func isLine(b core.ResponseBlock) bool {
	return b.Kind == core.BlockToolUse || b.Kind == core.BlockStatus || b.Kind == core.BlockWarning
}

func writeMarkdownBlock(b *strings.Builder, bl core.ResponseBlock) {
	switch bl.Kind {
	case core.BlockText:
		b.WriteString(strings.TrimRight(bl.Text, "\n"))
	case core.BlockCode:
		fmt.Fprintf(b, "```%s\n%s\n```", bl.Language, strings.TrimRight(bl.Text, "\n"))
	case core.BlockDiff:
		fmt.Fprintf(b, "📝 %s %s", actionWord(bl.Action), bl.Path)
		if bl.Text != "" {
			fmt.Fprintf(b, "\n```diff\n%s\n```", strings.TrimRight(bl.Text, "\n"))
		}
	case core.BlockToolUse:
		b.WriteString(ToolLine(bl))
	case core.BlockError:
		b.WriteString("❌ **Error:** " + bl.Text)
	case core.BlockWarning:
		b.WriteString("⚠️ " + bl.Text)
	case core.BlockStatus:
		b.WriteString("_" + bl.Text + "_")
	case core.BlockFooter:
		b.WriteString("— " + FooterText(bl))
	default:
		b.WriteString(bl.Text)
	}
}

// ToolLine is the plain text of a tool block: an icon for its status, the
// tool's name, its short argument and its short result.
func ToolLine(bl core.ResponseBlock) string {
	icon := "🔧"
	switch bl.Status {
	case core.ToolDone:
		icon = "✅"
	case core.ToolFailed:
		icon = "⚠️"
	}
	s := icon + " " + bl.Tool
	if bl.Text != "" {
		s += ": " + core.Shorten(bl.Text, 120)
	}
	if bl.Detail != "" {
		s += " → " + core.Shorten(bl.Detail, 120)
	}
	return s
}

// FooterText is a footer block's text, such as "12.3s · $0.0421".
func FooterText(bl core.ResponseBlock) string {
	parts := []string{formatDuration(bl.Duration)}
	if bl.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", bl.CostUSD))
	}
	return strings.Join(parts, " · ")
}

func formatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func actionWord(a string) string {
	switch a {
	case "add":
		return "added"
	case "delete":
		return "deleted"
	case "update":
		return "updated"
	}
	return a
}

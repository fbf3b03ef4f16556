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
func MarkdownText(blocks []core.ResponseBlock) string { return join(blocks, writeMarkdownBlock) }

// join writes each block with write, set apart by their separators.
func join(blocks []core.ResponseBlock, write func(*strings.Builder, core.ResponseBlock)) string {
	var b strings.Builder
	for i, bl := range blocks {
		if i > 0 {
			b.WriteString(separator(blocks[i-1], bl))
		}
		write(&b, bl)
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
		fmt.Fprintf(b, "📝 %s %s%s", actionWord(bl.Action), bl.Path, diffCounts(bl.Text))
		if bl.Text != "" {
			fmt.Fprintf(b, "\n```diff\n%s\n```", shownDiff(bl.Text))
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
	return toolLine(bl, func(s string) string { return s }, func(s string) string { return s })
}

// toolLine is a tool block's line with the tool's name written by name
// and its argument and result escaped by escape.
func toolLine(bl core.ResponseBlock, name, escape func(string) string) string {
	icon := "🔧"
	switch bl.Status {
	case core.ToolDone:
		icon = "✅"
	case core.ToolFailed:
		icon = "⚠️"
	}
	s := icon + " " + name(bl.Tool)
	if bl.Text != "" {
		s += ": " + escape(core.Shorten(bl.Text, 120))
	}
	if bl.Detail != "" {
		s += " → " + escape(core.Shorten(bl.Detail, 120))
	}
	return s
}

// FooterText is a footer block's text, such as "12.3s · $0.0421", or
// "12.3s · 12.0k in / 310 out tokens" from a CLI that reports no cost.
func FooterText(bl core.ResponseBlock) string {
	parts := []string{formatDuration(bl.Duration)}
	switch {
	case bl.CostUSD > 0:
		parts = append(parts, fmt.Sprintf("$%.4f", bl.CostUSD))
	case bl.InputTokens+bl.OutputTokens > 0:
		parts = append(parts, core.Tokens(bl.InputTokens, bl.OutputTokens))
	}
	if bl.ContextPercent > 0 {
		ctx := fmt.Sprintf("ctx %d%%", bl.ContextPercent)
		if bl.ContextPercent > core.ContextCrowded {
			ctx += " (//compact frees it)"
		}
		parts = append(parts, ctx)
	}
	return strings.Join(parts, " · ")
}

func formatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// maxDiffLines is how many lines of one file's diff a chat shows: a
// reply of whole files is unreadable on a phone. /diff shows everything.
const maxDiffLines = 12

// shownDiff is a diff cut to maxDiffLines, saying how many lines it left
// out, without its final newline.
func shownDiff(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) <= maxDiffLines+2 { // cutting two lines would save nothing
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:maxDiffLines], "\n") + fmt.Sprintf("\n… %d more lines (/diff shows them all)", len(lines)-maxDiffLines)
}

// diffCounts is " (+added −removed)" for a diff's body, or nothing.
func diffCounts(text string) string {
	added, removed := 0, 0
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	if added+removed == 0 {
		return ""
	}
	return fmt.Sprintf(" (+%d −%d)", added, removed)
}

func actionWord(a string) string {
	switch a {
	case "add":
		return "added"
	case "delete":
		return "deleted"
	case "update":
		return "updated"
	case "write":
		return "wrote"
	}
	return a
}

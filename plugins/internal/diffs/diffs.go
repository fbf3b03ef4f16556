// Package diffs writes the unified diffs plugins put in core.BlockDiff
// blocks, from what a CLI reports of a file edit: its own hunks, or the
// old and new text of the edit.
package diffs

import (
	"fmt"
	"path/filepath"
	"strings"
)

// RelPath shows an edited file's path relative to the turn's workdir when
// it is inside it, as the user knows it.
func RelPath(workdir, path string) string {
	if workdir == "" || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(workdir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return path
}

// Hunk is one hunk of a unified diff; Lines keep their leading ' ', '-'
// or '+'.
type Hunk struct {
	OldStart, OldLines, NewStart, NewLines int
	Lines                                  []string
}

// FromHunks writes hunks as a unified diff's body.
func FromHunks(hunks []Hunk) string {
	var b strings.Builder
	for _, h := range hunks {
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			b.WriteString(strings.TrimRight(l, "\n"))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// NewFile is the diff of a file created with content.
func NewFile(content string) string {
	lines := splitLines(content)
	return FromHunks([]Hunk{{NewStart: 1, NewLines: len(lines), Lines: prefixed("+", lines)}})
}

// Replace is the diff of old text replaced by new where the CLI does not
// say at which line: one hunk without line numbers, every old line taken
// out and every new one put in, the lines both share at either end kept
// as context.
func Replace(old, new string) string {
	o, n := splitLines(old), splitLines(new)
	head, tail := commonEnds(o, n)
	var lines []string
	lines = append(lines, prefixed(" ", o[:head])...)
	lines = append(lines, prefixed("-", o[head:len(o)-tail])...)
	lines = append(lines, prefixed("+", n[head:len(n)-tail])...)
	lines = append(lines, prefixed(" ", o[len(o)-tail:])...)
	var b strings.Builder
	b.WriteString("@@\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// commonEnds counts the lines a and b share at their start and, of the
// rest, at their end.
func commonEnds(a, b []string) (head, tail int) {
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	return head, tail
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func prefixed(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}

// Edit is a file-editing tool's input as Claude Code and Gemini CLI name
// its members: a file written whole (Content), or text in it replaced.
type Edit struct {
	FilePath  string `json:"file_path"`
	Content   string `json:"content"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

// Replaces reports whether the edit replaces text rather than writing the
// file whole.
func (e Edit) Replaces() bool { return e.OldString != "" || e.NewString != "" }

// Diff is the edit's diff: the text replaced, or the content written.
// Only the replaced text is known, not where in the file it is; and a
// file written whole is shown as new, the tool not saying what it was.
func (e Edit) Diff() string {
	if e.Replaces() {
		return Replace(e.OldString, e.NewString)
	}
	return Replace("", e.Content)
}

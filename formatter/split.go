package formatter

import (
	"strings"
	"unicode/utf8"
)

// closeFence ends a page that stops inside a code block.
const closeFence = "\n```"

// SplitMarkdown splits s into pages of at most limit runes each. It breaks
// at line ends where it can; inside a fenced code block it closes the fence
// at the end of a page and reopens it, with the same info string, at the
// start of the next, so every page renders on its own. A line longer than
// a page is cut between runes, never inside one. limit should be at least
// a few dozen runes so a reopened fence leaves room for content.
func SplitMarkdown(s string, limit int) []string {
	if utf8.RuneCountInString(s) <= limit {
		return []string{s}
	}
	sp := splitter{limit: limit}
	for _, line := range strings.Split(s, "\n") {
		sp.add(line)
	}
	sp.emit()
	return sp.pages
}

type splitter struct {
	limit int
	pages []string
	page  []string
	size  int    // runes in page, newlines between lines included
	fence string // the opening line of the fence open at the page's end
	// fresh is true while the page holds nothing but a reopened fence.
	fresh bool
}

func (sp *splitter) emit() {
	if len(sp.page) == 0 || sp.fresh {
		return
	}
	text := strings.Join(sp.page, "\n")
	if sp.fence != "" {
		text += closeFence
	}
	sp.pages = append(sp.pages, text)
	sp.page, sp.size = nil, 0
	if sp.fence != "" {
		sp.page = []string{sp.fence}
		sp.size = utf8.RuneCountInString(sp.fence)
		sp.fresh = true
	}
}

// room is how many runes a line appended now may have.
func (sp *splitter) room(fenceAfter string) int {
	n := sp.limit - sp.size
	if len(sp.page) > 0 {
		n-- // the newline before the line
	}
	if fenceAfter != "" {
		n -= len(closeFence)
	}
	return n
}

func (sp *splitter) add(line string) {
	fenceAfter := sp.fence
	if strings.HasPrefix(strings.TrimSpace(line), "```") {
		if sp.fence == "" {
			fenceAfter = reopenLine(line)
		} else {
			fenceAfter = ""
		}
	}
	n := utf8.RuneCountInString(line)
	if n > sp.room(fenceAfter) && !sp.fresh && len(sp.page) > 0 {
		sp.emit()
	}
	// A line longer than a whole page is cut; its pieces stay inside the
	// fence that was open before it.
	for n > sp.room(fenceAfter) {
		cut := max(sp.room(sp.fence), 1)
		head, tail := cutRunes(line, cut)
		sp.append(head)
		sp.emit()
		line, n = tail, n-cut
	}
	sp.append(line)
	sp.fence = fenceAfter
}

func (sp *splitter) append(line string) {
	if len(sp.page) > 0 {
		sp.size++
	}
	sp.page = append(sp.page, line)
	sp.size += utf8.RuneCountInString(line)
	sp.fresh = false
}

// maxInfo bounds the info string repeated when a fence is reopened, so
// that a page always has room for content.
const maxInfo = 16

// reopenLine returns the line that reopens the fence line opened: its
// backticks and the first word of its info string.
func reopenLine(line string) string {
	info := strings.TrimPrefix(strings.TrimSpace(line), "```")
	if f := strings.Fields(info); len(f) > 0 {
		info = f[0]
	} else {
		info = ""
	}
	if head, _ := cutRunes(info, maxInfo); head != "" {
		info = head
	}
	return "```" + info
}

// cutRunes splits s after n runes.
func cutRunes(s string, n int) (string, string) {
	i := 0
	for j := range s {
		if i == n {
			return s[:j], s[j:]
		}
		i++
	}
	return s, ""
}

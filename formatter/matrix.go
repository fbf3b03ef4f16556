package formatter

import (
	"html"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// Matrix renders blocks as the formatted bodies of Matrix messages
// (format org.matrix.custom.html), each of at most limit visible
// characters. The tags are Telegram's (b, i, s, code, pre with a
// language class, a), all in the set the Matrix spec recommends clients
// show; lines outside code blocks are joined by <br>, since a Matrix
// client lays HTML out as HTML, where a newline is a space.
func Matrix(blocks []core.ResponseBlock, limit int) []string {
	var ls tgLines
	for i, bl := range blocks {
		if i > 0 && separator(blocks[i-1], bl) == "\n\n" {
			ls.blank()
		}
		ls.block(bl)
	}
	return paginate(ls.cut(limit), limit, "<br>\n")
}

// MatrixPlain turns a page rendered by Matrix back into plain text: a
// message's body, which clients without HTML show, and notifications.
func MatrixPlain(s string) string {
	return html.UnescapeString(tagRE.ReplaceAllString(strings.ReplaceAll(s, "<br>\n", "\n"), ""))
}

package claude

import (
	"bytes"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// The answer's text as the stream shows it, and the result line's text
// where the stream did not show it all.

// showError emits an error block, once per distinct message: the CLI
// repeats an API error in the result line.
func (p *Parser) showError(msg string) {
	msg = strings.TrimSpace(msg)
	if msg == "" || msg == p.lastError {
		return
	}
	p.lastError = msg
	p.emit(core.ErrorEvent(msg))
}

func (p *Parser) text(s string) {
	p.wroteText = true
	p.shown = append(p.shown, s...)
	if len(p.shown) > 2*shownLimit {
		cut := len(p.shown) - shownLimit
		p.shown = append(p.shown[:0], p.shown[cut:]...)
		p.block -= cut
		if p.block < 0 {
			p.block = -1
		}
	}
	p.emit(core.TextEvent(s))
}

// paragraph separates a new text block from earlier answer text.
func (p *Parser) paragraph() {
	if p.wroteText {
		p.emit(core.TextEvent("\n\n"))
	}
	p.block = len(p.shown)
}

// shownLimit bounds the answer text a parser keeps to compare with the
// result line's.
const shownLimit = 1 << 20

// finalText shows the text of a successful result line that the stream did
// not: a stream without partial messages whose assistant line was lost, an
// assistant message cut short, a CLI that only fills the result. The
// result is the last message's text, so text the stream showed ends the
// answer so far; a block cut short is completed, anything else follows as
// a paragraph of its own.
func (p *Parser) finalText(result string) {
	if strings.TrimSpace(result) == "" || bytes.HasSuffix(withoutSpace(p.shown), withoutSpace([]byte(result))) {
		return
	}
	if p.block >= 0 && p.block < len(p.shown) {
		if started := string(p.shown[p.block:]); strings.HasPrefix(result, started) {
			p.text(result[len(started):])
			return
		}
	}
	p.paragraph()
	p.text(strings.TrimLeft(result, "\n"))
}

// withoutSpace returns b without white space, so texts that differ only in
// how their blocks were joined compare equal.
func withoutSpace(b []byte) []byte {
	return bytes.Join(bytes.Fields(b), nil)
}

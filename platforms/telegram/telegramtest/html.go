package telegramtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

// allowedTags are the tags Telegram's HTML parse mode accepts, with the
// attributes each may carry.
var allowedTags = map[string][]string{
	"b": nil, "strong": nil, "i": nil, "em": nil, "u": nil, "ins": nil,
	"s": nil, "strike": nil, "del": nil, "tg-spoiler": nil, "span": {"class"},
	"a": {"href"}, "code": {"class"}, "pre": nil, "blockquote": {"expandable"},
	"tg-emoji": {"emoji-id"},
}

var (
	tagRE    = regexp.MustCompile(`^<(/?)([a-z-]+)((?:\s+[a-z-]+(?:="[^"<>]*")?)*)\s*>`)
	attrRE   = regexp.MustCompile(`([a-z-]+)(?:="([^"<>]*)")?`)
	entityRE = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});`)
)

// ParseHTML parses text the way Telegram's HTML parse mode does and
// returns the text a user sees. It fails, with the wording of Telegram's
// "can't parse entities" errors, on a tag Telegram does not know, an
// attribute it does not allow, a tag closed out of order or never closed,
// an entity inside code, and a <, > or & that is neither markup nor an
// entity.
func ParseHTML(s string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			m := tagRE.FindStringSubmatch(s[i:])
			if m == nil {
				return "", fmt.Errorf("unsupported start tag at byte offset %d", i)
			}
			closing, name := m[1] == "/", m[2]
			allowed, ok := allowedTags[name]
			if !ok {
				return "", fmt.Errorf("unsupported start tag %q at byte offset %d", name, i)
			}
			if closing {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top(stack), name)
				}
				stack = stack[:len(stack)-1]
			} else {
				for _, a := range attrRE.FindAllStringSubmatch(m[3], -1) {
					if !contains(allowed, a[1]) {
						return "", fmt.Errorf("unsupported attribute %q of tag %q at byte offset %d", a[1], name, i)
					}
				}
				if p := top(stack); (p == "code" || p == "pre") && !(p == "pre" && name == "code") {
					return "", fmt.Errorf("tag %q inside %q at byte offset %d", name, p, i)
				}
				stack = append(stack, name)
			}
			i += len(m[0])
		case '&':
			m := entityRE.FindStringSubmatch(s[i:])
			if m == nil {
				return "", fmt.Errorf("character '&' at byte offset %d is not an entity; use &amp;", i)
			}
			out.WriteString(decodeEntity(m[1]))
			i += len(m[0])
		case '>':
			return "", fmt.Errorf("character '>' at byte offset %d is reserved; use &gt;", i)
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't find end tag corresponding to start tag %q", top(stack))
	}
	return out.String(), nil
}

func decodeEntity(e string) string {
	switch e {
	case "lt":
		return "<"
	case "gt":
		return ">"
	case "amp":
		return "&"
	case "quot":
		return `"`
	}
	var n int64
	if strings.HasPrefix(e, "#x") {
		n, _ = strconv.ParseInt(e[2:], 16, 32)
	} else {
		n, _ = strconv.ParseInt(e[1:], 10, 32)
	}
	return string(rune(n))
}

func top(stack []string) string {
	if len(stack) == 0 {
		return ""
	}
	return stack[len(stack)-1]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// UTF16Len counts s as Telegram counts message length.
func UTF16Len(s string) int { return len(utf16.Encode([]rune(s))) }

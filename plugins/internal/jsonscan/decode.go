package jsonscan

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// String decodes a raw JSON string. ok is false for anything else.
func String(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		if !utf8.Valid(body) {
			return string(validUTF8(nil, body)), true
		}
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				out = append(out, c)
				continue
			}
			// Copy the run up to the next escape, valid or made so.
			j := i + 1
			for j < len(body) && body[j] != '\\' {
				j++
			}
			out = validUTF8(out, body[i:j])
			i = j - 1
			continue
		}
		i++
		if i >= len(body) {
			return "", false
		}
		switch body[i] {
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := hexRune(body[i+1:])
			if n == 0 {
				return "", false
			}
			i += n
			if utf16.IsSurrogate(r) {
				// A pair encodes one rune; a lone half is invalid.
				r2, n2 := rune(-1), 0
				if i+2 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
					r2, n2 = hexRune(body[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); n2 > 0 && d != utf8.RuneError {
					r = d
					i += 2 + n2
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

// validUTF8 appends b to out with each byte that is not part of valid
// UTF-8 replaced by U+FFFD, as encoding/json does.
func validUTF8(out, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// hexRune reads the four hex digits of a \u escape.
func hexRune(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 32)
	if err != nil {
		return 0, 0
	}
	return rune(v), 4
}

// Float decodes a raw JSON number; ok is false for anything else.
func Float(raw []byte) (float64, bool) {
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// Int decodes a raw JSON number as an int; ok is false for anything else,
// fractions included.
func Int(raw []byte) (int, bool) {
	f, ok := Float(raw)
	if !ok || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// Bool decodes a raw JSON true; anything else is false.
func Bool(raw []byte) bool { return string(raw) == "true" }

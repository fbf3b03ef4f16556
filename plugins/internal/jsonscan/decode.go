package jsonscan

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"sync"
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
		if c == '\\' {
			if out, i, ok = unescape(out, body, i+1); !ok {
				return "", false
			}
			continue
		}
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
	}
	return string(out), true
}

// Str is String's text, and "" for anything but a string.
func Str(raw []byte) string {
	s, _ := String(raw)
	return s
}

// unescape appends the character of the escape at body[i] (after its
// backslash) and returns the index of its last byte; ok is false for an
// invalid escape.
func unescape(out, body []byte, i int) (_ []byte, last int, ok bool) {
	if i >= len(body) {
		return out, i, false
	}
	switch c := body[i]; c {
	case '"', '\\', '/':
		return append(out, c), i, true
	case 'b':
		return append(out, '\b'), i, true
	case 'f':
		return append(out, '\f'), i, true
	case 'n':
		return append(out, '\n'), i, true
	case 'r':
		return append(out, '\r'), i, true
	case 't':
		return append(out, '\t'), i, true
	case 'u':
		r, n := hexRune(body[i+1:])
		if n == 0 {
			return out, i, false
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
		return utf8.AppendRune(out, r), i, true
	}
	return out, i, false
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

// Decode sets the fields of the struct v points to from the members of
// the object obj holds, by their json tags: string, bool, int and float64
// fields, and []byte fields, which get the member's raw value (pointing
// into obj). Members without such a field, and of other types, go to
// other when it is set. It reports whether obj is exactly one whole object
// (see Members); a value of an unexpected type leaves its field zero.
func Decode(obj []byte, v any, other func(key, value []byte)) bool {
	rv := reflect.ValueOf(v).Elem()
	fields := fieldsOf(rv.Type())
	return Members(obj, func(key, value []byte) {
		i, ok := fields[string(key)]
		if !ok {
			if other != nil {
				other(key, value)
			}
			return
		}
		switch f := rv.Field(i); f.Kind() {
		case reflect.String:
			f.SetString(Str(value))
		case reflect.Bool:
			f.SetBool(Bool(value))
		case reflect.Int:
			n, _ := Int(value)
			f.SetInt(int64(n))
		case reflect.Float64:
			x, _ := Float(value)
			f.SetFloat(x)
		case reflect.Slice:
			f.SetBytes(value)
		}
	})
}

// fieldCache holds each struct type's decodable fields by JSON name.
var fieldCache sync.Map // reflect.Type → map[string]int

func fieldsOf(t reflect.Type) map[string]int {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "" || name == "-":
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8,
			f.Type.Kind() == reflect.String, f.Type.Kind() == reflect.Bool, f.Type.Kind() == reflect.Int,
			f.Type.Kind() == reflect.Float64:
			m[name] = i
		}
	}
	fieldCache.Store(t, m)
	return m
}

// DecodeElements decodes each object of the array arr into a T, as Decode
// does.
func DecodeElements[T any](arr []byte) []T {
	var out []T
	for el := range Elements(arr) {
		var v T
		Decode(el, &v, nil)
		out = append(out, v)
	}
	return out
}

package jsonscan

import (
	"bytes"
	"iter"
)

// Complete reports whether line (without surrounding space) is exactly
// one JSON object with balanced brackets and closed strings: a line cut
// short by a dying process is not.
func Complete(line []byte) bool { return Members(line, func(_, _ []byte) {}) }

// Members calls member with each member of the object line holds, key and
// raw value, in order, and reports whether line is exactly one whole
// object, as Complete does. Decoders switch on string(key), which does not
// allocate.
func Members(line []byte, member func(key, value []byte)) bool {
	o := NewObject(line)
	for o.Next() {
		member(o.Key(), o.Value())
	}
	return o.Closed() && o.End() == len(line)
}

// Object iterates over the members of a JSON object, scanning each value
// once. Use it as
//
//	for o := jsonscan.NewObject(line); o.Next(); {
//		switch string(o.Key()) { … o.Value() … }
//	}
//
// The zero Object has no members.
type Object struct {
	data     []byte
	i        int
	key, val []byte
	closed   bool
	started  bool
}

// NewObject returns an iterator over the members of the object data
// starts with.
func NewObject(data []byte) Object { return Object{data: data} }

// Next moves to the next member. It is false after the last one, and at
// malformed or cut-off input.
func (o *Object) Next() bool {
	d := o.data
	i := o.i
	if !o.started {
		o.started = true
		i = skipSpace(d, 0)
		if i >= len(d) || d[i] != '{' {
			o.i = len(d)
			return false
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == '}' {
			o.closed, o.i = true, i+1
			return false
		}
	} else {
		i = skipSpace(d, i)
		switch {
		case i < len(d) && d[i] == ',':
			i = skipSpace(d, i+1)
		case i < len(d) && d[i] == '}' && !o.closed:
			o.closed, o.i = true, i+1
			return false
		default:
			o.i = len(d)
			return false
		}
	}
	if i >= len(d) || d[i] != '"' {
		o.i = len(d)
		return false
	}
	kend := ValueEnd(d, i)
	if kend < 0 {
		o.i = len(d)
		return false
	}
	o.key = d[i+1 : kend-1]
	i = skipSpace(d, kend)
	if i >= len(d) || d[i] != ':' {
		o.i = len(d)
		return false
	}
	i = skipSpace(d, i+1)
	vend := ValueEnd(d, i)
	if vend < 0 {
		o.i = len(d)
		return false
	}
	o.val, o.i = d[i:vend], vend
	return true
}

// Key returns the current member's key as it is written, without its
// quotes and with escapes left as they are (the CLIs never escape keys).
func (o *Object) Key() []byte { return o.key }

// Value returns the current member's raw value.
func (o *Object) Value() []byte { return o.val }

// Closed reports whether the iteration reached the object's closing brace.
func (o *Object) Closed() bool { return o.closed }

// End returns the index just past the object once Closed.
func (o *Object) End() int { return o.i }

// Walk calls fn with the key of each member of the object data starts
// with, and the rest of data from the member's value on, until fn returns
// false. Only the values fn lets pass are scanned to their end, so
// stopping at a member never reads what follows it: the way to pick a
// field out of a long line that may be cut off.
func Walk(data []byte, fn func(key, rest []byte) bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return
	}
	i = skipSpace(data, i+1)
	for {
		if i >= len(data) || data[i] != '"' {
			return
		}
		end := ValueEnd(data, i)
		if end < 0 {
			return
		}
		key := data[i+1 : end-1]
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return
		}
		i = skipSpace(data, i+1)
		if !fn(key, data[i:]) {
			return
		}
		if end = ValueEnd(data, i); end < 0 {
			return
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ',' {
			return
		}
		i = skipSpace(data, i+1)
	}
}

// Elements yields the raw elements of the array arr starts with.
func Elements(arr []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		i := skipSpace(arr, 0)
		if i >= len(arr) || arr[i] != '[' {
			return
		}
		i = skipSpace(arr, i+1)
		if i < len(arr) && arr[i] == ']' {
			return
		}
		for {
			end := ValueEnd(arr, i)
			if end < 0 || !yield(arr[i:end]) {
				return
			}
			i = skipSpace(arr, end)
			if i >= len(arr) || arr[i] != ',' {
				return
			}
			i = skipSpace(arr, i+1)
		}
	}
}

// Field returns data from the value of key on, in the object data starts
// with, or nil. Cut it with Value.
func Field(data []byte, key string) []byte {
	var v []byte
	Walk(data, func(k, rest []byte) bool {
		if string(k) == key {
			v = rest
			return false
		}
		return true
	})
	return v
}

// Value cuts the JSON value rest starts with; nil when it is cut off.
func Value(rest []byte) []byte {
	end := ValueEnd(rest, 0)
	if end < 0 {
		return nil
	}
	return rest[:end]
}

// StringField returns the string value of key in the object data starts
// with, or "".
func StringField(data []byte, key string) string {
	s, _ := String(Value(Field(data, key)))
	return s
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// ValueEnd returns the index just past the JSON value starting at i in
// data, or -1 when it is cut off or malformed.
func ValueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		// Find the next quote fast, then check it is not escaped: an odd
		// run of backslashes before it escapes it.
		for j := i + 1; ; {
			k := bytes.IndexByte(data[j:], '"')
			if k < 0 {
				return -1
			}
			j += k
			n := 0
			for n < j-i-1 && data[j-1-n] == '\\' {
				n++
			}
			if n%2 == 0 {
				return j + 1
			}
			j++
		}
	case '{', '[':
		var open [32]byte
		stack := open[:0]
		for j := i; j < len(data); j++ {
			switch c := data[j]; c {
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || stack[len(stack)-1] != c-2 {
					return -1 // '}' is '{'+2 and ']' is '['+2
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return j + 1
				}
			case '"':
				end := ValueEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			}
		}
		return -1
	}
	j := i
	for j < len(data) && isLiteral(data[j]) {
		j++
	}
	if j == i || j == len(data) && !validLiteral(data[i:j]) {
		return -1
	}
	return j
}

func isLiteral(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// validLiteral reports whether a literal that ends the input is whole:
// "tru" or "12" at the end of a cut line may be cut.
func validLiteral(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	}
	return false
}

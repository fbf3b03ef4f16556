package codex

import (
	"bytes"
	"encoding/json"
)

// The rollout listing reads a few fields near the start of lines that can
// be tens of kilobytes long (the first holds the session's instructions).
// Decoding such a line costs more than reading the file, so these helpers
// walk an object's members and stop at the wanted one, skipping values
// without decoding them.

// eachField calls fn with the key of each member of the JSON object data
// starts with, and the rest of data from the member's value on, until fn
// returns false. Only the values fn lets pass are scanned to their end, so
// stopping at a member never reads what follows it. Malformed or cut-off
// input ends the walk quietly.
func eachField(data []byte, fn func(key string, rest []byte) bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return
		}
		end := valueEnd(data, i)
		if end < 0 {
			return
		}
		key, ok := unquote(data[i:end])
		if !ok {
			return
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return
		}
		i = skipSpace(data, i+1)
		if !fn(key, data[i:]) {
			return
		}
		end = valueEnd(data, i)
		if end < 0 {
			return
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ',' {
			return
		}
		i++
	}
}

// field returns data from the value of key on, in the object data starts
// with, or nil.
func field(data []byte, key string) []byte {
	var v []byte
	eachField(data, func(k string, rest []byte) bool {
		if k == key {
			v = rest
			return false
		}
		return true
	})
	return v
}

// value cuts the JSON value rest starts with, or returns nil.
func value(rest []byte) []byte {
	end := valueEnd(rest, 0)
	if end < 0 {
		return nil
	}
	return rest[:end]
}

// stringField returns the string value of key in the object data starts
// with, or "".
func stringField(data []byte, key string) string {
	s, _ := unquote(value(field(data, key)))
	return s
}

// unquote decodes a raw JSON string.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at i, or
// -1 when it is cut off. It checks only enough syntax to find the end.
func valueEnd(data []byte, i int) int {
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
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			case '"':
				end := valueEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			}
		}
		return -1
	}
	j := i
	for j < len(data) && bytes.IndexByte([]byte(",}] \t\r\n"), data[j]) < 0 {
		j++
	}
	if j == i || j == len(data) {
		return -1
	}
	return j
}

package configured

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/jake-bot/jake-bot/core"
)

// Mapping says which fields of a jsonl stream carry what. Each kind has
// rules; every rule that matches a line contributes its values.
type Mapping struct {
	// Text values are answer text, appended as they come.
	Text []Rule
	// Session values are the session id to resume.
	Session []Rule
	// Error values are shown as errors.
	Error []Rule
}

// Rule takes the values at Path from lines that meet every condition.
type Rule struct {
	Path Path
	When []Cond
	// Paragraph puts a blank line between this value and earlier text:
	// for CLIs that print whole messages rather than deltas.
	Paragraph bool
}

// Cond holds when the value at Path, written as JSON scalars are ("true",
// "null", "42", or the string itself), equals Value.
type Cond struct {
	Path  Path
	Value string
}

// Path is a dotted path into a JSON object: "event.delta.text". A number
// indexes an array and "*" takes every element of an array or object.
type Path []string

// ParsePath parses a dotted path; it returns nil for a malformed one.
func ParsePath(s string) Path {
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if p == "" {
			return nil
		}
	}
	return parts
}

func (p Path) String() string { return strings.Join(p, ".") }

// values returns every value at p in v.
func (p Path) values(v any) []any {
	cur := []any{v}
	for _, seg := range p {
		var next []any
		for _, c := range cur {
			switch c := c.(type) {
			case map[string]any:
				if seg == "*" {
					for _, x := range c {
						next = append(next, x)
					}
				} else if x, ok := c[seg]; ok {
					next = append(next, x)
				}
			case []any:
				if seg == "*" {
					next = append(next, c...)
				} else if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(c) {
					next = append(next, c[i])
				}
			}
		}
		cur = next
	}
	return cur
}

// scalar writes a JSON value the way a condition compares it; objects and
// arrays become compact JSON.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (r Rule) matches(v any) bool {
	for _, c := range r.When {
		ok := false
		for _, x := range c.Path.values(v) {
			if scalar(x) == c.Value {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// jsonlReader applies a Mapping to a stream's lines. It is for one turn.
type jsonlReader struct {
	m       Mapping
	emit    func(core.Event)
	session string
	wrote   bool
	lastErr string
	errors  int
	garbage int
}

func (j *jsonlReader) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if b[0] != '{' || dec.Decode(&v) != nil {
		j.garbage++
		return
	}
	for _, r := range j.m.Session {
		if !r.matches(v) {
			continue
		}
		for _, x := range r.Path.values(v) {
			if s := scalar(x); s != j.session && tokenRE.MatchString(s) {
				j.session = s
				j.emit(core.Event{Kind: core.EventSession, SessionID: s})
			}
		}
	}
	for _, r := range j.m.Text {
		if !r.matches(v) {
			continue
		}
		for _, x := range r.Path.values(v) {
			s, ok := x.(string)
			if !ok || s == "" {
				continue
			}
			if r.Paragraph && j.wrote {
				s = "\n\n" + s
			}
			j.wrote = true
			j.emit(core.TextEvent(s))
		}
	}
	for _, r := range j.m.Error {
		if !r.matches(v) {
			continue
		}
		for _, x := range r.Path.values(v) {
			// A CLI often repeats its error (in an event and in the result).
			if s := strings.TrimSpace(scalar(x)); s != "" && s != "null" && s != j.lastErr {
				j.lastErr = s
				j.errors++
				j.emit(core.ErrorEvent(s))
			}
		}
	}
}

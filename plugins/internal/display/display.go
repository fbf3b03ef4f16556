// Package display shortens what the CLIs report into what a chat shows
// of it: tool names made readable, the telling line of a tool's output.
package display

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/core"
)

// Title makes an identifier readable: "read_file" → "Read File",
// "process-manager" → "Process Manager". A name without words is kept.
func Title(s string) string {
	words := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
	if len(words) == 0 {
		return s
	}
	for i, w := range words {
		r, n := utf8.DecodeRuneInString(w)
		words[i] = string(unicode.ToUpper(r)) + w[n:]
	}
	return strings.Join(words, " ")
}

// FirstLine is s's first non-blank line, shortened for a tool line.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return core.Shorten(s, 200)
}

// LastLines is the last n lines of a command's output, joined on one
// line and shortened: what a command printed last says most about how it
// ended.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return core.Shorten(strings.TrimSpace(strings.Join(lines, " ⏎ ")), 200)
}

// Plural counts: "1 item", "3 items".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// APIError is a model API's error body that a CLI passes on inside its
// own message, such as `[API Error: {"error":{"code":400,"message":"…",
// "status":"INVALID_ARGUMENT"}}]`.
type APIError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	// Before and After are msg's text around the body.
	Before, After string `json:"-"`
}

// ParseAPIError finds the API's error body in msg; ok is false when msg
// holds none with a message.
func ParseAPIError(msg string) (e APIError, ok bool) {
	start, end := strings.IndexByte(msg, '{'), strings.LastIndexByte(msg, '}')
	if start < 0 || end < start {
		return e, false
	}
	var body struct {
		Error APIError `json:"error"`
	}
	if json.Unmarshal([]byte(msg[start:end+1]), &body) != nil || body.Error.Message == "" {
		return e, false
	}
	e = body.Error
	e.Before, e.After = strings.TrimSpace(msg[:start]), strings.TrimSpace(msg[end+1:])
	return e, true
}

// Denials lists the tool calls a CLI did not run for want of permission,
// whether its mode or the chat's answer refused them: the agent's own
// text may not say so. Each call is Call's.
type Denials []string

// NotRun is the detail of a denied call's line.
const NotRun = "not run for want of permission"

// Call is a tool call as a denial lists it: the tool, and what it would
// have done.
func Call(tool, arg string) string {
	if arg == "" {
		return tool
	}
	return tool + " `" + arg + "`"
}

// Add records a denied call, once.
func (d *Denials) Add(call string) {
	if !slices.Contains(*d, call) {
		*d = append(*d, call)
	}
}

// Block is the warning that lists the denials; ok is false for none.
func (d Denials) Block() (b core.ResponseBlock, ok bool) {
	if len(d) == 0 {
		return b, false
	}
	return core.ResponseBlock{Kind: core.BlockWarning, ID: "permission-denials",
		Text: "Not run, for want of permission: " + strings.Join(d, ", ")}, true
}

// Option is one answer a CLI offers to its agent's own question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Offer makes q a question with options to pick from: their labels, and
// what each means as its detail.
func Offer(q *core.Question, options []Option) {
	for _, o := range options {
		q.Options = append(q.Options, o.Label)
		if o.Description != "" {
			q.Detail += o.Label + ": " + o.Description + "\n"
		}
	}
}

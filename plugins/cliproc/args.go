package cliproc

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Args is a CLI's extra arguments as one variable gives them, split the
// way a shell splits a command's words, so that a quoted argument such as
// --allowedTools "Bash(git log:*)" stays one argument.
type Args []string

// UnmarshalText splits text into words with mvdan.cc/sh's shell parser and
// removes their quotes and backslashes, but expands nothing: $VAR, ${…},
// $(…), `…`, $((…)), <(…) and $'…' are errors, and globs, braces and ~
// stay as written. An unbalanced quote, a trailing backslash, an operator
// (; | & < > and unquoted parentheses) or an unquoted word starting with #
// is an error too, rather than a guess: a misread or silently dropped
// argument (the parser skips a # comment) could loosen what the CLI is
// allowed to do.
func (a *Args) UnmarshalText(text []byte) error {
	s := string(text)
	var words []string
	for w, err := range syntax.NewParser().WordsSeq(strings.NewReader(s)) {
		if err != nil {
			return fmt.Errorf("want shell-quoted words (quote a word holding spaces or any of ;|&<>()): %w", err)
		}
		word, err := unquote(s, w)
		if err != nil {
			return err
		}
		words = append(words, word)
	}
	// Unquoting keeps every #, so a shortfall means the parser skipped a
	// comment.
	if strings.Count(s, "#") != strings.Count(strings.Join(words, ""), "#") {
		return errors.New("a word starting with # would be dropped as a comment; quote it")
	}
	*a = words
	return nil
}

// unquote returns w, a word of src, with its quotes and escaping
// backslashes removed; any expansion in it is an error.
func unquote(src string, w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if err := unescape(&b, p.Value, ""); err != nil {
				return "", err
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", notExpanded(src, p)
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", notExpanded(src, p)
			}
			for _, in := range p.Parts {
				lit, ok := in.(*syntax.Lit)
				if !ok {
					return "", notExpanded(src, in)
				}
				if err := unescape(&b, lit.Value, "\"\\$`\n"); err != nil {
					return "", err
				}
			}
		default:
			return "", notExpanded(src, part)
		}
	}
	return b.String(), nil
}

// unescape writes lit with its escaping backslashes removed: before any
// character when special is empty (outside quotes), else only before one
// of special (inside double quotes). A backslash before a newline is a
// line continuation and goes with it.
func unescape(b *strings.Builder, lit, special string) error {
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(lit) {
			return errors.New("want shell-quoted words: a trailing backslash escapes nothing")
		}
		if next := lit[i+1]; special == "" || strings.IndexByte(special, next) >= 0 {
			if next != '\n' {
				b.WriteByte(next)
			}
			i++
			continue
		}
		b.WriteByte(c)
	}
	return nil
}

// notExpanded is the error for an expansion n of src.
func notExpanded(src string, n syntax.Node) error {
	return fmt.Errorf("%s is not expanded here (no shell reads these arguments): write the value itself, or put it in single quotes to pass it as written",
		src[n.Pos().Offset():n.End().Offset()])
}

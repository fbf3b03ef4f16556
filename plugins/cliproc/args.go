package cliproc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/shlex"
)

// Args is a CLI's extra arguments as one variable gives them, split the
// way a POSIX shell splits words, so that a quoted argument such as
// --allowedTools "Bash(git log:*)" stays one argument.
type Args []string

// UnmarshalText splits text into words. An unbalanced quote, a trailing
// backslash or an unquoted word starting with # is an error rather than a
// guess: a misread or silently dropped argument (shlex reads # as the start
// of a comment) could loosen what the CLI is allowed to do.
func (a *Args) UnmarshalText(text []byte) error {
	s := string(text)
	words, err := shlex.Split(s)
	if err != nil {
		return fmt.Errorf("want shell-quoted words: %w", err)
	}
	// Every # outside a comment ends up in some word, so a shortfall means
	// shlex dropped a comment.
	if strings.Count(s, "#") != strings.Count(strings.Join(words, ""), "#") {
		return errors.New("a word starting with # would be dropped as a comment; quote it")
	}
	if len(words) == 0 {
		words = nil
	}
	*a = words
	return nil
}

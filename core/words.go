package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/jake-bot/jake-bot/core/workspace"
)

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// Shorten flattens s to one line of at most n runes, marking a cut with an
// ellipsis.
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if rs := []rune(s); len(rs) > n {
		return string(rs[:n-1]) + "…"
	}
	return s
}

func joinIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "/" + id
	}
	return strings.Join(out, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Tokens says a count of tokens in words: "12.0k in / 3.1k out tokens".
func Tokens(in, out int) string { return kilo(in) + " in / " + kilo(out) + " out tokens" }

func kilo(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fk", float64(n)/1000)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// roundUp rounds d up to whole seconds, so "try again in" is never early.
func roundUp(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// listLimit is how many past conversations a listing shows.
const listLimit = 10

// size says n bytes in words (workspace.Size).
func size(n int64) string { return workspace.Size(n) }

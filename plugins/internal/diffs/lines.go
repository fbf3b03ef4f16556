package diffs

import (
	"fmt"
	"strings"
)

// context is how many unchanged lines a hunk shows around a change.
const context = 3

// maxTable bounds the work of matching the lines between the changed
// ends of two files (their product); past it, the middle is shown as
// taken out whole and put in whole.
const maxTable = 1 << 20

// Lines is the unified diff of a file whose old text was old and new one
// new, as hunks with line numbers and three lines of context, for CLIs
// that report an edit as the file before and after. It is empty when
// nothing changed.
func Lines(old, new string) string {
	a, b := splitLines(old), splitLines(new)
	if len(a) == 0 {
		return NewFile(new)
	}
	if len(b) == 0 {
		return DeletedFile(old)
	}
	return FromHunks(hunks(a, b, script(a, b)))
}

// DeletedFile is the diff of a file removed with content.
func DeletedFile(content string) string {
	lines := splitLines(content)
	return FromHunks([]Hunk{{OldStart: 1, OldLines: len(lines), Lines: prefixed("-", lines)}})
}

// op is one line of an edit script: ' ' kept, '-' taken out of a, '+'
// put in from b.
type op byte

// script is an edit script from a to b: the lines both start and end with
// kept, the lines between matched by their longest common subsequence.
func script(a, b []string) []op {
	head, tail := commonEnds(a, b)
	ops := make([]op, 0, len(a)+len(b))
	for range head {
		ops = append(ops, ' ')
	}
	ops = append(ops, middle(a[head:len(a)-tail], b[head:len(b)-tail])...)
	for range tail {
		ops = append(ops, ' ')
	}
	return ops
}

// middle is the edit script of two runs of lines that differ at both
// ends, by a table of the longest common subsequences of their suffixes.
func middle(a, b []string) []op {
	var ops []op
	if len(a)*len(b) > maxTable {
		for range a {
			ops = append(ops, '-')
		}
		for range b {
			ops = append(ops, '+')
		}
		return ops
	}
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, ' ')
			i, j = i+1, j+1
		case j == len(b) || i < len(a) && lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			ops = append(ops, '-')
			i++
		default:
			ops = append(ops, '+')
			j++
		}
	}
	return ops
}

// hunks groups an edit script into hunks, each change with up to context
// kept lines around it; changes closer than twice that share a hunk.
func hunks(a, b []string, ops []op) []Hunk {
	var out []Hunk
	for start := 0; start < len(ops); {
		first := start
		for first < len(ops) && ops[first] == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		// Extend the hunk while the next change is near.
		last, kept := first, 0
		for k := first; k < len(ops) && kept <= 2*context; k++ {
			if ops[k] == ' ' {
				kept++
			} else {
				last, kept = k, 0
			}
		}
		from, to := max(first-context, start), min(last+context+1, len(ops))
		out = append(out, hunk(a, b, ops, from, to))
		start = to
	}
	return out
}

// hunk is the hunk of ops[from:to].
func hunk(a, b []string, ops []op, from, to int) Hunk {
	ai, bi := 0, 0
	for _, o := range ops[:from] {
		if o != '+' {
			ai++
		}
		if o != '-' {
			bi++
		}
	}
	h := Hunk{OldStart: ai + 1, NewStart: bi + 1}
	for _, o := range ops[from:to] {
		switch o {
		case ' ':
			h.Lines = append(h.Lines, " "+a[ai])
			ai, bi = ai+1, bi+1
			h.OldLines++
			h.NewLines++
		case '-':
			h.Lines = append(h.Lines, "-"+a[ai])
			ai++
			h.OldLines++
		case '+':
			h.Lines = append(h.Lines, "+"+b[bi])
			bi++
			h.NewLines++
		}
	}
	if h.OldLines == 0 {
		h.OldStart--
	}
	if h.NewLines == 0 {
		h.NewStart--
	}
	return h
}

// QuestionLines is how much of a diff a question about an edit shows.
const QuestionLines = 24

// Short keeps the first max lines of a diff for a question about an edit,
// saying how many more there are.
func Short(diff string, max int) string {
	lines := strings.Split(strings.TrimRight(diff, "\n"), "\n")
	if len(lines) <= max {
		return strings.TrimRight(diff, "\n")
	}
	return strings.Join(lines[:max], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-max)
}

package diffs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/internal/diffs"
)

func TestDiffs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, got, want string }{
		{"hunks", diffs.FromHunks([]diffs.Hunk{{OldStart: 1, OldLines: 3, NewStart: 1, NewLines: 3, Lines: []string{" one", "-two", "+TWO", " three"}}}),
			"@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"},
		{"new file", diffs.NewFile("a\nb\n"), "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"new empty file", diffs.NewFile(""), "@@ -0,0 +1,0 @@\n"},
		{"replace", diffs.Replace("func f() {\n\treturn 1\n}", "func f() {\n\treturn 2\n}"), "@@\n func f() {\n-\treturn 1\n+\treturn 2\n }\n"},
		{"replace all", diffs.Replace("a", "b\nc"), "@@\n-a\n+b\n+c\n"},
		{"insert", diffs.Replace("x\ny", "x\nnew\ny"), "@@\n x\n+new\n y\n"},
		{"same lines", diffs.Replace("a\na", "a"), "@@\n a\n-a\n"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	long := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				if s != "" {
					b.WriteString(s + "\n")
				}
				continue
			}
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"new file", "", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"emptied", "x\ny\n", "", "@@ -1,2 +0,0 @@\n-x\n-y\n"},
		{"same", "a\nb\n", "a\nb\n", ""},
		{"context of three", long(20, nil), long(20, map[int]string{10: "ten"}),
			"@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+ten\n line 11\n line 12\n line 13\n"},
		{"two hunks", long(30, nil), long(30, map[int]string{3: "three", 25: ""}),
			"@@ -1,6 +1,6 @@\n line 1\n line 2\n-line 3\n+three\n line 4\n line 5\n line 6\n" +
				"@@ -22,7 +22,6 @@\n line 22\n line 23\n line 24\n-line 25\n line 26\n line 27\n line 28\n"},
		{"insert at the end", "a\n", "a\nb\n", "@@ -1,1 +1,2 @@\n a\n+b\n"},
		{"insert at the start", "b\n", "a\nb\n", "@@ -1,1 +1,2 @@\n+a\n b\n"},
	} {
		if got := diffs.Lines(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: Lines = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestShort(t *testing.T) {
	t.Parallel()
	if got := diffs.Short("@@\n-a\n+b\n", 5); got != "@@\n-a\n+b" {
		t.Errorf("Short kept %q", got)
	}
	if got := diffs.Short("1\n2\n3\n4\n", 2); got != "1\n2\n… 2 more lines" {
		t.Errorf("Short cut to %q", got)
	}
}

// Applying what Lines writes to the old text gives the new one.
func FuzzLines(f *testing.F) {
	f.Add("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nB\nc\nd\ne\nf\nG\nh\ni\n")
	f.Add("x\n", "")
	f.Fuzz(func(t *testing.T, old, new string) {
		old, new = strings.ReplaceAll(old, "\r", ""), strings.ReplaceAll(new, "\r", "")
		if !strings.HasSuffix(old, "\n") || !strings.HasSuffix(new, "\n") {
			return // files that end their last line
		}
		if got := apply(t, old, diffs.Lines(old, new)); got != new {
			t.Errorf("Lines(%q, %q) applied gives %q", old, new, got)
		}
	})
}

// apply applies a unified diff body to old.
func apply(t *testing.T, old, diff string) string {
	var a []string
	if old != "" {
		a = strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	}
	var out []string
	next := 0 // the next line of a not yet copied
	for _, line := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "@@"):
			var os, ol, ns, nl int
			if _, err := fmt.Sscanf(line, "@@ -%d,%d +%d,%d @@", &os, &ol, &ns, &nl); err != nil {
				t.Fatalf("hunk header %q: %v", line, err)
			}
			start := os - 1
			if ol == 0 {
				start = os
			}
			out = append(out, a[next:start]...)
			next = start
		case line[0] == ' ' || line[0] == '-':
			if next >= len(a) || a[next] != line[1:] {
				t.Fatalf("diff %q does not match old line %d of %q", diff, next, old)
			}
			if line[0] == ' ' {
				out = append(out, a[next])
			}
			next++
		case line[0] == '+':
			out = append(out, line[1:])
		}
	}
	out = append(out, a[next:]...)
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

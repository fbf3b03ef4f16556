package diffs_test

import (
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

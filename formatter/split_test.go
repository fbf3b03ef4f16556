package formatter_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jake-bot/jake-bot/formatter"
)

func TestSplitMarkdown(t *testing.T) {
	t.Parallel()
	code := "```go\n" + strings.Repeat("x := \"héllo, 世界\" // 🚀\n", 40) + "```"
	tests := []struct {
		name  string
		in    string
		limit int
	}{
		{"short", "hello", 100},
		{"prose", strings.Repeat("The quick brown fox. ", 200), 300},
		{"prose lines", strings.Repeat("line of text\n", 300), 250},
		{"code block", "Intro.\n\n" + code + "\n\nOutro.", 200},
		{"two code blocks", code + "\nbetween\n" + strings.ReplaceAll(code, "go", "python"), 150},
		{"one huge line", strings.Repeat("界", 1000), 100},
		{"huge line in code", "```\n" + strings.Repeat("é", 1000) + "\n```", 100},
		{"unclosed fence", "```sh\n" + strings.Repeat("echo hi\n", 100), 120},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pages := formatter.SplitMarkdown(tt.in, tt.limit)
			var rebuilt strings.Builder
			for i, p := range pages {
				if !utf8.ValidString(p) {
					t.Errorf("page %d is not valid UTF-8", i)
				}
				if n := utf8.RuneCountInString(p); n > tt.limit {
					t.Errorf("page %d has %d runes, over %d", i, n, tt.limit)
				}
				if strings.Count(p, "```")%2 != 0 {
					t.Errorf("page %d has unbalanced fences:\n%s", i, p)
				}
				rebuilt.WriteString(p)
			}
			// Nothing is lost: every non-fence character arrives in order.
			if got, want := strip(rebuilt.String()), strip(tt.in); got != want {
				t.Errorf("content changed by splitting:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// strip removes fences and white space, which splitting may add.
func strip(s string) string {
	s = strings.NewReplacer("```python", "", "```go", "", "```sh", "", "```", "").Replace(s)
	return strings.Join(strings.Fields(s), "")
}

func FuzzSplitMarkdown(f *testing.F) {
	f.Add("hello\n```go\nx\n```\n", 40)
	f.Add(strings.Repeat("界```\n", 50), 33)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 32 || limit > 5000 || !utf8.ValidString(s) {
			return
		}
		for _, p := range formatter.SplitMarkdown(s, limit) {
			if !utf8.ValidString(p) {
				t.Fatalf("invalid UTF-8 page %q", p)
			}
			if utf8.RuneCountInString(p) > limit {
				t.Fatalf("page of %d runes over %d: %q", utf8.RuneCountInString(p), limit, p)
			}
		}
	})
}

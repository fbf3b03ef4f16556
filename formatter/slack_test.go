package formatter_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
)

// The -update flag may be defined by another golden test of this package;
// define it only when nobody has.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// checkGolden compares got with the golden file at path, or rewrites the
// file under -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// pageBreak separates the pages of one rendering in a golden file.
const pageBreak = "\n-------- next message --------\n"

func TestSlackGolden(t *testing.T) {
	long := strings.Repeat("All work & no play makes <Jack> a dull boy. ", 12)
	cases := []struct {
		name   string
		limit  int
		blocks []core.ResponseBlock
	}{
		{"prose", formatter.SlackLimit, []core.ResponseBlock{{Kind: core.BlockText, Text: "# Plan\n\n" +
			"I'll **refactor** the *auth* module, see [the docs](https://example.com/a?b=1&c=2) and <https://go.dev>.\n" +
			"- keep `a < b && c > d` as is\n* strike ~~this~~\n> quoted & noted\n\n---\n" +
			"Python's __init__ and snake_case_names stay; so does 2 * 3 * 4.\n" +
			"![diagram](https://example.com/d.png) and \\*literal stars\\*."}}},
		{"code", formatter.SlackLimit, []core.ResponseBlock{
			{Kind: core.BlockText, Text: "Here it is:\n```go\nif a < b && ok {\n\treturn **p\n}\n```\nDone."},
			{Kind: core.BlockCode, Language: "sh", Text: "echo 'x' > out.txt\n"},
			{Kind: core.BlockText, Text: "Still streaming:\n```python\nprint(1 < 2)"},
		}},
		{"tools", formatter.SlackLimit, []core.ResponseBlock{
			{Kind: core.BlockStatus, Text: "thinking"},
			{Kind: core.BlockToolUse, Tool: "Bash", Text: "ls -la | grep '<x>'", Status: core.ToolDone, Detail: "3 files"},
			{Kind: core.BlockToolUse, Tool: "Process Manager · Restart Process", Text: "web", Status: core.ToolFailed, Detail: "exit 1"},
			{Kind: core.BlockToolUse, Tool: "Read", Text: "main.go", Status: core.ToolRunning},
			{Kind: core.BlockDiff, Path: "a&b.go", Action: "update", Text: "-x := 1\n+x := 2"},
			{Kind: core.BlockWarning, Text: "context is 90% full"},
			{Kind: core.BlockText, Text: "All done."},
			{Kind: core.BlockFooter, Duration: 12340 * time.Millisecond, CostUSD: 0.0421},
		}},
		{"error", formatter.SlackLimit, []core.ResponseBlock{
			{Kind: core.BlockText, Text: "Trying…"},
			{Kind: core.BlockError, Text: "claude exited with status 1: <stderr> Overloaded & retrying"},
			{Kind: core.BlockFooter, Duration: 95 * time.Second},
		}},
		{"split", 200, []core.ResponseBlock{
			{Kind: core.BlockText, Text: "Intro line.\n```js\n" + strings.Repeat("let x = a && b;\n", 20) + "```\n" + long},
			{Kind: core.BlockFooter, Duration: time.Second, CostUSD: 0.5},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pages := formatter.Slack(tc.blocks, tc.limit)
			checkPages(t, pages, tc.limit)
			got := strings.Join(pages, pageBreak) + "\n"
			checkGolden(t, filepath.Join("testdata", "slack", tc.name+".golden"), got)
		})
	}
}

var (
	entityRe  = regexp.MustCompile(`&(amp|lt|gt);`)
	rawAmpRe  = regexp.MustCompile(`&[a-z]*$`)
	strayCtrl = regexp.MustCompile(`[<>]`)
)

// checkPages checks what every Slack page must satisfy: within the limit,
// fences balanced, no entity cut in two, no raw < or > outside a link or
// quote.
func checkPages(t *testing.T, pages []string, limit int) {
	t.Helper()
	for i, p := range pages {
		if n := utf8.RuneCountInString(p); n > limit {
			t.Errorf("page %d has %d runes, limit %d", i, n, limit)
		}
		if n := strings.Count(p, "```"); n%2 != 0 {
			t.Errorf("page %d has %d fences:\n%s", i, n, p)
		}
		bare := entityRe.ReplaceAllString(p, "")
		for _, line := range strings.Split(bare, "\n") {
			if rawAmpRe.MatchString(strings.TrimSuffix(line, "```")) && !strings.Contains(line, "http") {
				t.Errorf("page %d: entity cut in line %q", i, line)
			}
			line = regexp.MustCompile(`<[^<>|]+(\|[^<>]*)?>`).ReplaceAllString(line, "")
			line = strings.TrimPrefix(line, "> ")
			if strayCtrl.MatchString(line) {
				t.Errorf("page %d: unescaped < or > in %q", i, line)
			}
		}
	}
}

func TestSlackMrkdwn(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"**bold**", "*bold*"},
		{"__bold__", "*bold*"},
		{"*it*", "_it_"},
		{"_it_", "_it_"},
		{"~~gone~~", "~gone~"},
		{"a **b *c* d** e", "a *b _c_ d* e"},
		{"[x](http://a.b/?q=1&r=2)", "<http://a.b/?q=1&amp;r=2|x>"},
		{"[a|b](http://x)", "<http://x|a¦b>"},
		{"[no url]()", "[no url]()"},
		{"[x](mailto:a@b.c)", "<mailto:a@b.c|x>"},
		// Model text never pings: only web and mail links become links.
		{"[x](!channel)", "[x](!channel)"},
		{"[x](!here)", "[x](!here)"},
		{"[x](@U123)", "[x](@U123)"},
		{"[x](#C123)", "[x](#C123)"},
		{"[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"<!channel> <@U1> <#C1>", "&lt;!channel&gt; &lt;@U1&gt; &lt;#C1&gt;"},
		{"<https://go.dev>", "<https://go.dev>"},
		{"<div>", "&lt;div&gt;"},
		{"`a<b` & c", "`a&lt;b` &amp; c"},
		{"``a ` b``", "`a ` b`"},
		{"unclosed `tick", "unclosed `tick"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"snake_case_name", "snake_case_name"},
		{"### Title ###", "*Title*"},
		{"  - nested", "  • nested"},
		{"> q", "> q"},
		{"***", "──────────"},
		{"```go\nx<1\n```", "```\nx&lt;1\n```"},
		{"```\nopen", "```\nopen\n```"},
		{"\\*not\\*", "*not*"},
	}
	for _, tc := range cases {
		if got := formatter.SlackMrkdwn(tc.in); got != tc.want {
			t.Errorf("SlackMrkdwn(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSlackSplitLongLine checks that a line longer than a page is cut
// between entities, not inside one, at every position.
func TestSlackSplitLongLine(t *testing.T) {
	t.Parallel()
	for pad := range 6 {
		text := strings.Repeat("x", pad) + strings.Repeat("&<>", 200)
		pages := formatter.Slack([]core.ResponseBlock{{Kind: core.BlockCode, Text: text}}, 100)
		checkPages(t, pages, 100)
		var got strings.Builder
		for _, p := range pages {
			p = strings.TrimSuffix(strings.TrimPrefix(p, "```\n"), "\n```")
			got.WriteString(strings.ReplaceAll(p, "\n", ""))
		}
		if want := formatter.SlackEscape(text); got.String() != want {
			t.Errorf("pad %d: pages join to %q, want %q", pad, got.String(), want)
		}
	}
}

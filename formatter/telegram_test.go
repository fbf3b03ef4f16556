package formatter

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/jake-bot/jake-bot/core"
)

// TestTelegramGolden renders each testdata/telegram/*.txt case and compares
// the pages with its .golden file; -update rewrites them.
func TestTelegramGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/telegram/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			limit, blocks := readCase(t, file)
			pages := Telegram(blocks, limit)
			checkPages(t, pages, limit)
			var b strings.Builder
			for i, p := range pages {
				fmt.Fprintf(&b, "=== page %d: %d units ===\n%s\n", i+1, utf16Len(TelegramPlain(p)), p)
			}
			golden := strings.TrimSuffix(file, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("Telegram(%s) mismatch (-want +got):\n%s", name, diff)
			}
		})
	}
}

// readCase parses a case file: a "limit: N" line, then blocks, each
// headed by a line "-- kind [args] --".
func readCase(t *testing.T, file string) (int, []core.ResponseBlock) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(string(data), "\n")
	limit, err := strconv.Atoi(strings.TrimPrefix(head, "limit: "))
	if err != nil {
		t.Fatalf("%s: first line must be limit: N", file)
	}
	var blocks []core.ResponseBlock
	var cur *core.ResponseBlock
	var text []string
	flush := func() {
		if cur != nil {
			cur.Text = strings.Join(text, "\n")
			blocks = append(blocks, *cur)
		}
		text = nil
	}
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") {
			text = append(text, line)
			continue
		}
		flush()
		f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(line, "-- "), " --"))
		arg := func(i int) string {
			if i < len(f) {
				return f[i]
			}
			return ""
		}
		b := core.ResponseBlock{}
		switch f[0] {
		case "text":
			b.Kind = core.BlockText
		case "code":
			b.Kind, b.Language = core.BlockCode, arg(1)
		case "diff":
			b.Kind, b.Action, b.Path = core.BlockDiff, arg(1), arg(2)
		case "tool":
			b.Kind, b.Tool, b.Status = core.BlockToolUse, arg(1), core.ToolStatus(arg(2))
		case "error":
			b.Kind = core.BlockError
		case "warning":
			b.Kind = core.BlockWarning
		case "status":
			b.Kind = core.BlockStatus
		case "footer":
			b.Kind = core.BlockFooter
			b.Duration, _ = time.ParseDuration(arg(1))
			b.CostUSD, _ = strconv.ParseFloat(arg(2), 64)
		default:
			t.Fatalf("%s: unknown block kind %q", file, f[0])
		}
		cur = &b
	}
	flush()
	return limit, blocks
}

var tagNameRE = regexp.MustCompile(`^</?([a-z-]+)`)

// checkPages checks what Telegram would: each page within the limit after
// entity parsing, tags balanced and properly nested, no bare < > &.
func checkPages(t *testing.T, pages []string, limit int) {
	t.Helper()
	for i, p := range pages {
		if n := utf16Len(TelegramPlain(p)); n > limit {
			t.Errorf("page %d has %d units, limit %d", i+1, n, limit)
		}
		if strings.TrimSpace(TelegramPlain(p)) == "" {
			t.Errorf("page %d is empty", i+1)
		}
		var stack []string
		for j := 0; j < len(p); j++ {
			switch p[j] {
			case '<':
				end := strings.IndexByte(p[j:], '>')
				if end < 0 {
					t.Fatalf("page %d: unterminated tag at %d", i+1, j)
				}
				tag := p[j : j+end+1]
				name := tagNameRE.FindStringSubmatch(tag)
				if name == nil {
					t.Fatalf("page %d: bad tag %q", i+1, tag)
				}
				if strings.HasPrefix(tag, "</") {
					if len(stack) == 0 || stack[len(stack)-1] != name[1] {
						t.Fatalf("page %d: %s closes %v", i+1, tag, stack)
					}
					stack = stack[:len(stack)-1]
				} else {
					stack = append(stack, name[1])
				}
				j += end
			case '>':
				t.Fatalf("page %d: bare > at %d", i+1, j)
			case '&':
				if !regexp.MustCompile(`^&(lt|gt|amp|quot);`).MatchString(p[j:]) {
					t.Fatalf("page %d: bare & at %d", i+1, j)
				}
			}
		}
		if len(stack) > 0 {
			t.Errorf("page %d: unclosed %v", i+1, stack)
		}
	}
}

func TestInlineHTML(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, html, plain string }{
		{"plain & <safe>", "plain &amp; &lt;safe&gt;", "plain & <safe>"},
		{"**bold** and *it*", "<b>bold</b> and <i>it</i>", "bold and it"},
		{"snake_case_name and 2*3*4", "snake_case_name and 2*3*4", "snake_case_name and 2*3*4"},
		{"`a<b` then ``x`y``", "<code>a&lt;b</code> then <code>x`y</code>", "a<b then x`y"},
		{"[docs](https://x.dev/?a=1&b=2) and [no](javascript:x)", `<a href="https://x.dev/?a=1&amp;b=2">docs</a> and [no](javascript:x)`, "docs and [no](javascript:x)"},
		{"[me](tg://user?id=1) pings nobody", "[me](tg://user?id=1) pings nobody", "[me](tg://user?id=1) pings nobody"},
		{"## Heading **x**", "<b>Heading <b>x</b></b>", "Heading x"},
		{"  - item", "  • item", "  • item"},
		{"**unclosed and ~~gone~~", "**unclosed and <s>gone</s>", "**unclosed and gone"},
		{`\*literal\*`, "*literal*", "*literal*"},
		{"x__init__y and __init__.py", "x__init__y and <b>init</b>.py", "x__init__y and init.py"}, // as CommonMark
	}
	for _, tt := range tests {
		h, p := inlineHTML(tt.in)
		if h != tt.html || p != tt.plain {
			t.Errorf("inlineHTML(%q) = %q, %q; want %q, %q", tt.in, h, p, tt.html, tt.plain)
		}
	}
}

func TestCutUTF16(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		limit   int
		atSpace bool
		want    []string
	}{
		{"abcdef", 4, false, []string{"abcd", "ef"}},
		{"😀😀😀", 3, false, []string{"😀", "😀", "😀"}},
		{"😀😀😀", 4, false, []string{"😀😀", "😀"}},
		{"中文字符", 3, false, []string{"中文字", "符"}},
		{"aaa bbb ccc", 9, true, []string{"aaa bbb ", "ccc"}},
		{"\xff\xfeab", 2, false, []string{"\xff\xfe", "ab"}},
	}
	for _, tt := range tests {
		if got := cutUTF16(tt.in, tt.limit, tt.atSpace); !cmp.Equal(got, tt.want) {
			t.Errorf("cutUTF16(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

// FuzzTelegram renders arbitrary markdown at small limits: every page must
// be balanced HTML within the limit, and no visible character may be lost
// outside markup.
func FuzzTelegram(f *testing.F) {
	for _, s := range []string{"**a** `b` _c_ [d](https://e.f)", "```go\nx < y\n```\ntail", "😀中文 & <x>\n\n# h", "```\nunclosed"} {
		f.Add(s, 12)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 8 || limit > 5000 || !utf8.ValidString(s) {
			t.Skip()
		}
		pages := Telegram([]core.ResponseBlock{{Kind: core.BlockText, Text: s}}, limit)
		checkPages(t, pages, limit)
		var got int
		for _, p := range pages {
			got += utf8.RuneCountInString(strings.Join(strings.Fields(TelegramPlain(p)), ""))
		}
		if want := utf8.RuneCountInString(strings.Join(strings.Fields(s), "")); got > want {
			t.Errorf("pages show %d non-space characters, the input has %d", got, want)
		}
	})
}

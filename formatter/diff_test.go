package formatter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// A file's diff in a chat is its counts and at most maxDiffLines lines.
func TestDiffBlocksAreCompact(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	long.WriteString("@@ -1,0 +1,30 @@\n")
	for i := range 30 {
		fmt.Fprintf(&long, "+line %d\n", i)
	}
	short := "@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
	for _, tc := range []struct {
		name, text string
		want       []string
		not        []string
	}{
		{"short", short, []string{"📝 updated a.txt (+1 −1)", "-two\n+TWO"}, []string{"more lines"}},
		{"long", long.String(), []string{"(+30 −0)", "+line 10\n… 19 more lines (/diff shows them all)"}, []string{"+line 11"}},
	} {
		bl := core.ResponseBlock{Kind: core.BlockDiff, Path: "a.txt", Action: "update", Text: tc.text}
		outs := map[string]string{
			"markdown": MarkdownText([]core.ResponseBlock{bl}),
			"slack":    strings.Join(Slack([]core.ResponseBlock{bl}, 40000), "\n"),
			"telegram": fmt.Sprint(Telegram([]core.ResponseBlock{bl}, 4096)),
		}
		for name, out := range outs {
			for _, w := range tc.want {
				if !strings.Contains(out, w) && !strings.Contains(out, strings.ReplaceAll(w, "📝 updated a.txt", "📝 updated <code>a.txt</code>")) &&
					!strings.Contains(out, strings.ReplaceAll(w, "a.txt", "`a.txt`")) {
					t.Errorf("%s %s lacks %q:\n%s", tc.name, name, w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("%s %s has %q:\n%s", tc.name, name, n, out)
				}
			}
		}
	}
}

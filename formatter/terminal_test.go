package formatter_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
)

// hostileText is model text that would drive the terminal it is printed
// on: an OSC 52 clipboard write, a title change, a cursor move and a
// screen clear, a carriage return that hides a line, a C1 CSI and a bell.
const hostileText = "safe\x1b]52;c;cm0gLXJmIH4=\x07 then\x1b]0;pwned\x1b\\ title\x1b[2A\x1b[2Jmoved\rhidden\u009b31mred\x07 end\ttab\nline two"

func TestStripControl(t *testing.T) {
	t.Parallel()
	got := formatter.StripControl(hostileText + "\x00\x7f\u0085")
	want := "safe]52;c;cm0gLXJmIH4= then]0;pwned\\ title[2A[2Jmovedhidden31mred end\ttab\nline two"
	if got != want {
		t.Fatalf("StripControl = %q, want %q", got, want)
	}
	for _, r := range got {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			t.Fatalf("control character %U left in %q", r, got)
		}
	}
}

func TestTerminalGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		blocks []core.ResponseBlock
	}{
		{"prose", []core.ResponseBlock{{Kind: core.BlockText, Text: "# Plan\n\nI'll **refactor** the `auth` module.\n- keep it\n```go\nif a < b {\n\treturn **p\n}\n```\nStill streaming:\n```sh\necho hi"}}},
		{"tools", []core.ResponseBlock{
			{Kind: core.BlockStatus, Text: "thinking"},
			{Kind: core.BlockToolUse, Tool: "Bash", Text: "ls -la", Status: core.ToolDone, Detail: "3 files"},
			{Kind: core.BlockToolUse, Tool: "Read", Text: "main.go", Status: core.ToolRunning},
			{Kind: core.BlockDiff, Path: "a.go", Action: "update", Text: "-x := 1\n+x := 2"},
			{Kind: core.BlockCode, Language: "sh", Text: "make\n"},
			{Kind: core.BlockWarning, Text: "context is 90% full"},
			{Kind: core.BlockText, Text: "All done."},
			{Kind: core.BlockFooter, Duration: 12340 * time.Millisecond, CostUSD: 0.0421},
		}},
		{"error", []core.ResponseBlock{
			{Kind: core.BlockText, Text: "Trying…"},
			{Kind: core.BlockError, Text: "claude exited with status 1"},
		}},
		{"hostile", []core.ResponseBlock{
			{Kind: core.BlockText, Text: hostileText},
			{Kind: core.BlockToolUse, Tool: "Bash\x1b[2J", Text: "echo \x1b]0;t\x07", Status: core.ToolDone, Detail: "\x1b[31mred"},
			{Kind: core.BlockError, Text: "bad\x1b]52;c;eA==\x07"},
		}},
	}
	for _, tc := range cases {
		for _, color := range []bool{false, true} {
			name, suffix := tc.name, ".golden"
			if color {
				suffix = ".tty.golden"
			}
			t.Run(name+suffix, func(t *testing.T) {
				t.Parallel()
				got := formatter.Terminal(tc.blocks, color) + "\n"
				checkTerminal(t, tc.blocks, got, color)
				// Escapes are written visibly so that the golden file reads
				// as the styles it expects.
				got = strings.ReplaceAll(got, "\x1b", `\e`)
				checkGolden(t, filepath.Join("testdata", "terminal", name+suffix), got)
			})
		}
	}
}

// checkTerminal checks what every terminal rendering must satisfy: plain
// is the markdown rendering of the stripped blocks, and styled output has
// no control character but the ESC of its own SGR styles.
func checkTerminal(t *testing.T, blocks []core.ResponseBlock, got string, color bool) {
	t.Helper()
	if !color {
		for _, bl := range blocks {
			if bl.Text != formatter.StripControl(bl.Text) {
				return // not comparable with the unstripped markdown
			}
		}
		if want := formatter.MarkdownText(blocks) + "\n"; got != want {
			t.Errorf("plain terminal output differs from markdown:\n got %q\nwant %q", got, want)
		}
	}
	rest := sgrRe.ReplaceAllString(got, "")
	if s := formatter.StripControl(rest); s != rest {
		t.Errorf("control characters other than SGR styles in %q", got)
	}
}

var sgrRe = regexp.MustCompile(`\x1b\[[0-9;]*m`)

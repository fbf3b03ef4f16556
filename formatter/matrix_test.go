package formatter

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jake-bot/jake-bot/core"
)

// TestMatrixIsTelegramWithLineBreaks: on every Telegram case, Matrix's
// pages are Telegram's with <br> between prose lines (a Matrix client
// lays the HTML out as HTML), code blocks left alone, and the same
// visible text.
func TestMatrixIsTelegramWithLineBreaks(t *testing.T) {
	files, err := filepath.Glob("testdata/telegram/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			limit, blocks := readCase(t, file)
			tg, mx := Telegram(blocks, limit), Matrix(blocks, limit)
			var unbroken, plain, tgPlain []string
			for i, p := range mx {
				unbroken = append(unbroken, strings.ReplaceAll(p, "<br>\n", "\n"))
				plain = append(plain, MatrixPlain(p))
				tgPlain = append(tgPlain, TelegramPlain(tg[min(i, len(tg)-1)]))
			}
			if diff := cmp.Diff(tg, unbroken); diff != "" {
				t.Errorf("Matrix without its <br>s differs from Telegram (-telegram +matrix):\n%s", diff)
			}
			if diff := cmp.Diff(tgPlain, plain); diff != "" {
				t.Errorf("MatrixPlain differs from TelegramPlain (-telegram +matrix):\n%s", diff)
			}
		})
	}
}

func TestMatrixBreaksProseNotCode(t *testing.T) {
	blocks := []core.ResponseBlock{{Kind: core.BlockText, Text: "one **two**\nthree\n\n```go\na := 1\nb := 2\n```"}}
	got := Matrix(blocks, 4000)
	want := []string{"one <b>two</b><br>\nthree<br>\n\n<pre><code class=\"language-go\">a := 1\nb := 2</code></pre>"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Matrix mismatch (-want +got):\n%s", diff)
	}
}

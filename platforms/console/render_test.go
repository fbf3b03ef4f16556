package console_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/platforms/console"
)

// sgr and redraw are the escapes the console writes itself.
var (
	sgr    = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	redraw = regexp.MustCompile(`\x1b\[[0-9]+F\x1b\[J`)
)

// Model text must not reach the terminal with control sequences in it: an
// OSC 52 clipboard write, a title change, a cursor move and clear, a bare
// CR, a C1 CSI. The console's own styling (SGR) and its redraw are all
// that may remain.
func TestConsoleStripsControlSequencesFromModelText(t *testing.T) {
	t.Parallel()
	hostile := []core.ResponseBlock{
		{Kind: core.BlockText, Text: "**hi**\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x1b\\\x1b[2A\x1b[2J\rgone\u009b31m\x07"},
		{Kind: core.BlockToolUse, Tool: "Bash", Text: "echo \x1b]0;t\x07", Status: core.ToolDone},
	}
	for _, tty := range []bool{false, true} {
		var out bytes.Buffer
		c := console.New(console.Options{In: strings.NewReader(""), Out: &out, TTY: tty, Typed: tty})
		ctx := context.Background()
		for _, page := range c.Render(hostile) {
			ref, err := c.Send(ctx, core.Target{}, page)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Edit(ctx, ref, page); err != nil {
				t.Fatal(err)
			}
		}
		got := out.String()
		if tty {
			got = redraw.ReplaceAllString(got, "")
			got = sgr.ReplaceAllString(got, "")
		}
		for _, r := range got {
			if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
				t.Errorf("tty=%v: control character %U reached the terminal: %q", tty, r, out.String())
				break
			}
		}
		if !strings.Contains(got, "gone") || !strings.Contains(got, "hi") {
			t.Errorf("tty=%v: the printable text was lost: %q", tty, got)
		}
	}
}

// Anything sent without Render on a pipe is stripped too.
func TestConsolePipeStripsSentText(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := console.New(console.Options{In: strings.NewReader(""), Out: &out})
	c.Send(context.Background(), core.Target{}, "a\x1b]0;t\x07b")
	if got := out.String(); got != "a]0;tb\n\n" {
		t.Fatalf("pipe output = %q", got)
	}
}

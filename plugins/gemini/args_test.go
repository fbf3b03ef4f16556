package gemini_test

import (
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/gemini"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	p := gemini.New(gemini.Config{Settings: cliproc.Settings{Model: "gemini-2.5-flash", Args: []string{"--sandbox"}}}, nil)
	for _, tc := range []struct {
		name string
		turn core.Turn
		want []string
	}{
		{"first turn", core.Turn{Prompt: "--help me; rm -rf ~"}, []string{"--output-format", "stream-json",
			"--approval-mode", "auto_edit", "--model", "gemini-2.5-flash", "--sandbox", "--prompt=--help me; rm -rf ~"}},
		{"resumed", core.Turn{Prompt: "again", SessionID: "fdb12d97-14ac-44ba-a1a2-e78b656706ab"}, []string{"--output-format",
			"stream-json", "--approval-mode", "auto_edit", "--model", "gemini-2.5-flash",
			"--resume", "fdb12d97-14ac-44ba-a1a2-e78b656706ab", "--sandbox", "--prompt=again"}},
	} {
		if got := p.Args(tc.turn); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Args = %q\nwant   %q", tc.name, got, tc.want)
		}
	}
}

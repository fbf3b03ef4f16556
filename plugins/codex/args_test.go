package codex_test

import (
	"slices"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/codex"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	p := codex.New(codex.Config{Settings: cliproc.Settings{Model: "gpt-5.5", Args: []string{"-c", "model_reasoning_effort=low"}}}, nil)
	for _, tc := range []struct {
		name string
		turn core.Turn
		want []string
	}{
		{"first turn", core.Turn{Prompt: "--help me; rm -rf ~"}, []string{"exec", "--json", "--skip-git-repo-check",
			"--sandbox", "workspace-write", "--model", "gpt-5.5", "-c", "model_reasoning_effort=low", "--", "--help me; rm -rf ~"}},
		{"resumed", core.Turn{Prompt: "again", ResumeToken: "01a200b0-3296-7430-8763-ca3edd6c3b57"}, []string{"exec", "--json",
			"--skip-git-repo-check", "--sandbox", "workspace-write", "--model", "gpt-5.5", "-c", "model_reasoning_effort=low",
			"resume", "01a200b0-3296-7430-8763-ca3edd6c3b57", "--", "again"}},
	} {
		if got := p.Args(tc.turn); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Args = %q\nwant   %q", tc.name, got, tc.want)
		}
	}
}

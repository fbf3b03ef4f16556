package codex

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// An agent the model spawns (multi_agent_v2) is one line that counts its
// tool calls, never lines of its own, with the real Codex; its thread's
// answer and end are not the turn's: the turn goes on to the model's own
// answer.
func TestSubagentIsOneLine(t *testing.T) {
	t.Parallel()
	bin := plugintest.CLIPath(t, "codex")
	model := plugintest.NewOpenAI(t, subagentReplies...)
	f := plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return New(Config{Home: filepath.Join(home, ".codex"), Settings: cliproc.Settings{Bin: bin,
			Args: append(plugintest.CodexArgs(model), "-c", "features.multi_agent_v2=true"), Model: "gpt-5.5",
			Env: append(plugintest.CodexEnv(t, home), mark)}}, nil)
	})
	tr := f.Run(context.Background(), "ask a helper", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	if text := tr.Text(); text != "The helper says it is empty." {
		t.Errorf("text %q, want the turn's own answer only", text)
	}
	var details []string
	for _, b := range tr.Blocks(core.BlockToolUse) {
		switch {
		case b.ID == "call_wait":
		case strings.HasPrefix(b.ID, "agent-") && b.Tool == "Agent" && b.Text == "lister":
			details = append(details, string(b.Status)+" "+b.Detail)
		default:
			t.Errorf("a line of its own: %+v", b)
		}
	}
	want := []string{"running ", "running 1 tool call, now Shell: echo one", "running 2 tool calls, now Shell: echo two", "done 2 tool calls"}
	if !slices.Equal(details, want) {
		t.Errorf("the agent's line went %q, want %q", details, want)
	}
}

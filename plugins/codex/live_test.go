package codex_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/codex"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Codex's plan (its update_plan tool, offered with
// tools.update_plan.enabled) is the reply's plan, one checklist updated
// in place; the turn reports how full the model's context window is.
func TestPlanAndContext(t *testing.T) {
	t.Parallel()
	plan := func(statuses ...string) plugintest.Reply {
		steps := []any{}
		for i, st := range statuses {
			steps = append(steps, map[string]any{"step": []string{"Read the code", "Write the fix", "Run the tests"}[i], "status": st})
		}
		return plugintest.Reply{Tool: &plugintest.ToolCall{Name: "update_plan", Input: map[string]any{"explanation": "Three steps", "plan": steps}}}
	}
	bin := plugintest.CLIPath(t, "codex")
	model := plugintest.NewOpenAI(t,
		plan("in_progress", "pending", "pending"),
		plan("completed", "completed", "in_progress"),
		plugintest.Reply{Text: []string{"Testing now."}})
	f := plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		return codex.New(codex.Config{Home: filepath.Join(home, ".codex"), Settings: cliproc.Settings{Bin: bin,
			Args: append(plugintest.CodexArgs(model), "-c", "tools.update_plan.enabled=true"), Model: "gpt-5.5",
			Env: append(plugintest.CodexEnv(t, home), mark)}}, nil)
	})
	tr := f.Run(context.Background(), "fix it", "")
	if tr.Err != nil || tr.Result.IsError {
		t.Fatalf("Run = %+v, %v", tr.Result, tr.Err)
	}
	plans := tr.Blocks(core.BlockPlan)
	const want = "📋 Plan: 2 of 3 done\n☑ Read the code\n☑ Write the fix\n▶ Run the tests"
	if len(plans) != 2 || plans[1].Text != want || plans[1].ID != plans[0].ID {
		t.Errorf("plan blocks %+v, want two, the last %q", plans, want)
	}
	if tr.Result.ContextWindow != 258400 || tr.Result.ContextTokens <= 0 {
		t.Errorf("context %d of %d tokens, want some of gpt-5.5's 258400", tr.Result.ContextTokens, tr.Result.ContextWindow)
	}
}

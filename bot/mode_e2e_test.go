package bot_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// /model reaches each real CLI: the fake model sees the model the
// conversation chose, from the next turn on.
func TestModelReachesTheModel(t *testing.T) {
	t.Parallel()
	clis := append([]otherCLI{claudeCLI}, otherCLIs...)
	models := map[string]string{"claude": "claude-sonnet-4-5-20250929", "codex": "gpt-5.4", "gemini": "gemini-2.5-pro"}
	for _, cli := range clis {
		t.Run(cli.id, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			cfg := f.config()
			cfg.Approvals = "auto"
			model := cli.setup(t, f, &cfg, plugintest.Reply{Text: []string{"First."}}, plugintest.Reply{Text: []string{"Second."}})
			c := f.start(cfg)
			c.say("/"+cli.id+" start", "one")
			c.expect(`started`)
			c.expect(`First\.`)
			c.say("/model " + models[cli.id])
			c.expect(`Model: ` + regexp.QuoteMeta(models[cli.id]) + `, from the next turn`)
			c.say("two")
			c.expect(`Second\.`)
			c.say("/status")
			c.expect(`Model: ` + regexp.QuoteMeta(models[cli.id]))
			c.close()
			reqs := model.Requests()
			if len(reqs) != 2 {
				t.Fatalf("model saw %d requests, want 2", len(reqs))
			}
			if got := reqs[0].Model(); got == models[cli.id] {
				t.Errorf("first turn asked for %q before /model", got)
			}
			if got := reqs[1].Model(); got != models[cli.id] {
				t.Errorf("second turn asked for model %q, want %q", got, models[cli.id])
			}
		})
	}
}

// /mode plan makes Claude Code's turn plan-only: the same Write that the
// configured mode (acceptEdits) lets through is refused.
func TestModePlanMakesClaudePlanOnly(t *testing.T) {
	t.Parallel()
	write := func(name string) *plugintest.ToolCall {
		return &plugintest.ToolCall{ID: "toolu_" + name, Name: "Write", Input: map[string]any{"file_path": name, "content": "made\n"}}
	}
	f := newFixture(t,
		plugintest.Reply{Tool: write("planned.txt")},
		plugintest.Reply{Text: []string{"Here is the plan."}},
		plugintest.Reply{Tool: write("made.txt")},
		plugintest.Reply{Text: []string{"Made it."}},
	)
	cfg := f.config()
	cfg.Approvals = "auto"
	c := f.start(cfg)
	c.say("/claude start", "/mode plan")
	c.expect(`started`)
	c.expect(`From the next turn: plan, no approvals asked`)
	c.say("make planned.txt")
	c.expect(`Here is the plan\.`)
	c.say("/mode default", "make made.txt")
	c.expect(`the plugin's default`)
	c.expect(`Made it\.`)
	c.close()
	if _, err := os.Stat(filepath.Join(f.workdir, "planned.txt")); err == nil {
		t.Error("planned.txt was written in plan mode")
	}
	if _, err := os.Stat(filepath.Join(f.workdir, "made.txt")); err != nil {
		t.Errorf("made.txt was not written after /mode default: %v", err)
	}
	reqs := f.model.Requests()
	if len(reqs) < 2 {
		t.Fatalf("model saw %d requests", len(reqs))
	}
	if !strings.Contains(reqs[1].Text(), "while in plan mode") {
		t.Errorf("the model was not told the write was refused in plan mode: %q", reqs[1].Text())
	}
}

// "//greet" runs Claude Code's own custom command /greet: the model gets
// the command's text, not the words "//greet".
func TestDoubleSlashRunsTheCLIsCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t, plugintest.Reply{Text: []string{"xyzzy to you."}})
	dir := filepath.Join(f.workdir, ".claude", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "greet.md"), []byte("Say the magic word plugh-$ARGUMENTS.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := f.config()
	cfg.Approvals = "auto"
	c := f.start(cfg)
	c.say("/claude start", "//greet kindly")
	c.expect(`started`)
	c.expect(`xyzzy to you\.`)
	c.close()
	reqs := f.model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Text(), "plugh-kindly") {
		t.Fatalf("model saw %d requests, want one with the command's text", len(reqs))
	}
}

package claude_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// askingPlugin is Claude Code in the default permission mode, where every
// shell command is asked about.
func askingPlugin(t *testing.T, model *plugintest.Anthropic) (p *claude.Plugin, workdir string) {
	p, workdir, _ = askingPluginIn(t, model)
	return p, workdir
}

// askingPluginIn is askingPlugin, also returning Claude Code's config
// directory.
func askingPluginIn(t *testing.T, model *plugintest.Anthropic) (p *claude.Plugin, workdir, configDir string) {
	t.Helper()
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the turn", pids)
		}
	})
	workdir, _ = filepath.EvalSymlinks(t.TempDir())
	configDir = filepath.Join(home, ".claude")
	p = claude.New(claude.Config{Bin: plugintest.CLIPath(t, "claude"), PermissionMode: "default",
		ConfigDir: configDir, Env: append(plugintest.ClaudeEnv(t, model, home), mark)}, nil)
	return p, workdir, configDir
}

// The real CLI asks before a shell command; the answer reaches it.
func TestRunAsksBeforeATool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		answer   core.Answer
		created  bool
		toolSays string // in the tool result the model gets next
	}{
		{"allow", core.Answer{Decision: core.Allow}, true, ""},
		{"always", core.Answer{Decision: core.AllowAlways}, true, ""},
		{"deny with a reason", core.Answer{Decision: core.Deny, Reason: "not in this repository"}, false, "The user denied this tool call: not in this repository"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			model := plugintest.NewAnthropic(t,
				plugintest.Reply{Text: []string{"Creating it."}, Tool: &plugintest.ToolCall{ID: "toolu_ask", Name: "Bash",
					Input: map[string]any{"command": "echo asked > asked.txt", "description": "Create a file"}}},
				plugintest.Reply{Text: []string{"Finished."}})
			p, workdir := askingPlugin(t, model)
			var questions []*core.Question
			var texts strings.Builder
			res, err := p.Run(context.Background(), core.Turn{Workdir: workdir, Prompt: "make asked.txt", Ask: true}, func(ev core.Event) {
				switch ev.Kind {
				case core.EventQuestion:
					questions = append(questions, ev.Question)
					ev.Question.Answer(tc.answer)
				case core.EventText:
					texts.WriteString(ev.Text)
				}
			})
			if err != nil || res.IsError {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			if len(questions) != 1 || questions[0].Tool != "Bash" || questions[0].Summary != "`echo asked > asked.txt`" {
				t.Fatalf("questions %+v, want one about the command", questions)
			}
			if _, err := os.Stat(filepath.Join(workdir, "asked.txt")); (err == nil) != tc.created {
				t.Errorf("asked.txt exists: %v, want %v", err == nil, tc.created)
			}
			if !strings.Contains(texts.String(), "Finished.") {
				t.Errorf("text %q: the turn did not go on after the answer", texts.String())
			}
			reqs := model.Requests()
			if last := reqs[len(reqs)-1].Text(); tc.toolSays != "" && !strings.Contains(last, tc.toolSays) {
				t.Errorf("the model was told %q, want %q", last, tc.toolSays)
			}
		})
	}
}

// Cancelling an asking turn interrupts it through the protocol: the CLI
// ends the turn itself, and the session keeps it for the next turn.
func TestRunInterruptKeepsTheSession(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"Thinking hard"}, Hold: hold},
		plugintest.Reply{Text: []string{"Continuing."}})
	t.Cleanup(func() { close(hold) })
	p, workdir := askingPlugin(t, model)
	ctx, cancel := context.WithCancel(context.Background())
	var session string
	res, err := p.Run(ctx, core.Turn{Workdir: workdir, Prompt: "think", Ask: true}, func(ev core.Event) {
		if ev.Kind == core.EventSession && session == "" {
			session = ev.ResumeToken
			go func() {
				<-model.Arrived() // the model is working on the turn
				cancel()
			}()
		}
	})
	if err == nil {
		t.Fatalf("Run = %+v, want the cancellation", res)
	}
	var texts strings.Builder
	res, err = p.Run(context.Background(), core.Turn{Workdir: workdir, Prompt: "go on", ResumeToken: session, Ask: true}, func(ev core.Event) {
		if ev.Kind == core.EventText {
			texts.WriteString(ev.Text)
		}
	})
	if err != nil || !strings.Contains(texts.String(), "Continuing.") {
		t.Fatalf("resumed turn = %+v, %v, %q", res, err, texts.String())
	}
	reqs := model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, "[Request interrupted by user]") || !strings.Contains(got, "think") {
		t.Errorf("the resumed session does not hold the interrupted turn: %q", got)
	}
}

// The agent's own question (AskUserQuestion) is put to the chat with its
// options, and the option picked reaches the agent as its answer.
func TestRunPutsTheAgentsQuestion(t *testing.T) {
	t.Parallel()
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_q", Name: "AskUserQuestion", Input: map[string]any{"questions": []any{
			map[string]any{"question": "Which database?", "header": "DB", "multiSelect": false, "options": []any{
				map[string]any{"label": "Postgres", "description": "for the big data"}, map[string]any{"label": "SQLite", "description": "one file"}}}}}}},
		plugintest.Reply{Text: []string{"SQLite it is."}})
	p, workdir := askingPlugin(t, model)
	var asked []*core.Question
	res, err := p.Run(context.Background(), core.Turn{Workdir: workdir, Prompt: "pick a database", Ask: true}, func(ev core.Event) {
		if ev.Kind == core.EventQuestion {
			asked = append(asked, ev.Question)
			ev.Question.Answer(core.Answer{Decision: core.Allow, Choice: "SQLite"})
		}
	})
	if err != nil || res.IsError {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if len(asked) != 1 || asked[0].Summary != "Which database?" || strings.Join(asked[0].Options, ",") != "Postgres,SQLite" ||
		!strings.Contains(asked[0].Detail, "SQLite: one file") {
		t.Fatalf("asked %+v", asked)
	}
	reqs := model.Requests()
	if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, `"Which database?"="SQLite"`) {
		t.Errorf("the agent was not told the answer: %q", got)
	}
}

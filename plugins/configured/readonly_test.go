package configured_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/configured"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// An ACP agent runs a read-only turn in its read-only mode: the one its
// entry names (read_only_mode), or plan once it has announced it. An
// entry without one, or not of mode acp, refuses the turn with
// core.ErrNoReadOnly before starting anything.
func TestReadOnlyTurns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		agent string
		// named is the entry's read_only_mode; first runs a turn that
		// may write before, so that the agent announces its modes.
		named string
		first bool
		// means is what ReadOnlyMeans says before the read-only turn,
		// empty for none (ok false).
		means string
		// leave has the model ask to leave the mode before it writes.
		leave bool
	}{
		{"qwen named", "qwen", "plan", false, qwenMeans, false},
		{"qwen announced", "qwen", "", true, qwenMeans, false},
		{"qwen leaves plan mode", "qwen", "plan", false, qwenMeans, true},
		{"qwen not yet announced", "qwen", "", false, "", false},
		// OpenCode 1.18.33 announces no modes over ACP.
		{"opencode announces none", "opencode", "", true, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := readOnlyFixture(t, tc.agent, tc.named)
			if tc.first {
				f.Model.Push(plugintest.Reply{Text: []string{"Hello."}})
				if tr := f.Run(context.Background(), "hi", ""); tr.Err != nil {
					t.Fatal(tr.Err)
				}
			}
			means, ok := f.Plugin.(core.ReadOnlyPlugin).ReadOnlyMeans()
			if means != tc.means || ok != (tc.means != "") {
				t.Fatalf("ReadOnlyMeans = %q, %v; want %q", means, ok, tc.means)
			}
			before := len(f.Model.Requests())
			path := filepath.Join(f.Workdir, plugintest.ReadOnlyFile)
			if tc.leave {
				f.Model.Push(plugintest.Reply{Tool: &plugintest.ToolCall{Name: "exit_plan_mode", Input: map[string]any{"plan": "Write the file."}}})
			}
			f.Model.Push(plugintest.Reply{Tool: &plugintest.ToolCall{Name: "write_file", Input: map[string]any{"file_path": path, "content": "changed\n"}}},
				plugintest.Reply{Text: []string{"Refused."}})
			turn := f.Turn("write "+plugintest.ReadOnlyFile, "", true)
			turn.ReadOnly, turn.Mode = true, "yolo"
			tr := plugintest.RunAnswering(context.Background(), t, f.Plugin, turn, core.Answer{Decision: core.Allow})
			if !ok {
				if !errors.Is(tr.Err, core.ErrNoReadOnly) || len(f.Model.Requests()) != before {
					t.Errorf("Run = %v with %d requests to the model; want ErrNoReadOnly and none", tr.Err, len(f.Model.Requests())-before)
				}
				return
			}
			if tr.Err != nil || tr.Result.IsError {
				t.Fatalf("Run = %+v, %v; want a clean end", tr.Result, tr.Err)
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("%s was written", path)
			}
			if qs := tr.Questions(); len(qs) != 0 {
				t.Errorf("questions %+v, want none: a read-only turn refuses all it is asked", qs)
			}
			if tc.leave {
				// Refused leaving plan mode, Qwen Code ends the turn.
				if w := tr.Blocks(core.BlockWarning); len(w) != 1 || !strings.HasPrefix(w[0].Text, "Not run, for want of permission: ") {
					t.Errorf("warnings %+v, want exit_plan_mode refused", w)
				}
				return
			}
			reqs := f.Model.Requests()
			if outs := reqs[len(reqs)-1].ToolOutputs(); !strings.Contains(strings.Join(outs, "\n"), qwenRefusal) {
				t.Errorf("the model was told %q, want %q", outs, qwenRefusal)
			}
		})
	}
}

const (
	qwenMeans = "Qwen Code's plan mode, every approval refused"
	// qwenRefusal is what Qwen Code's plan mode answers a write.
	qwenRefusal = `Plan mode is active. The tool "write_file" cannot be executed because it modifies the system.`
)

// readOnlyFixture runs the real pinned agent through mode acp, its entry
// naming readOnly as its read-only mode.
func readOnlyFixture(t *testing.T, agent, readOnly string) *plugintest.Fixture {
	t.Helper()
	model := plugintest.NewOpenAI(t)
	bin := plugintest.CLIPath(t, agent)
	return plugintest.NewFixture(t, model, func(home, mark string) core.Plugin {
		var spec configured.Spec
		switch agent {
		case "qwen":
			spec = qwenSpec(bin, home, plugintest.QwenArgs(model), append(plugintest.QwenEnv(t, home), mark)...)
		default:
			spec = openCodeSpec(bin, append(plugintest.OpenCodeEnv(t, home, model, true), mark)...)
		}
		spec.ReadOnlyMode = readOnly
		return configured.New(spec, nil)
	})
}

// An entry of any other mode than acp has no read-only mode.
func TestReadOnlyNeedsACP(t *testing.T) {
	t.Parallel()
	p := configured.New(configured.Spec{ID: "tool", Name: "Tool", Bin: "/nonexistent/tool", Mode: configured.ModePlain,
		Args: []configured.Arg{{Placeholder: "message"}}}, nil)
	if means, ok := p.ReadOnlyMeans(); ok {
		t.Errorf("ReadOnlyMeans = %q, true; want none", means)
	}
	_, err := p.Run(context.Background(), core.Turn{Workdir: t.TempDir(), Prompt: "hi", ReadOnly: true}, func(core.Event) {})
	if !errors.Is(err, core.ErrNoReadOnly) || strings.Contains(err.Error(), "not found") {
		t.Errorf("Run = %v, want ErrNoReadOnly", err)
	}
}

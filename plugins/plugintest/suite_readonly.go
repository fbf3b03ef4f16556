package plugintest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// Write is a write the model attempts in a read-only turn (Suite.Writes).
type Write struct {
	Name string
	// Call is the tool call that writes "changed\n" to path, a file in
	// the workdir that holds "original\n" (or, Creates, does not exist).
	Call    func(path string) *ToolCall
	Creates bool
	// Refusal is what the CLI answers the model, in the request after
	// the call: part of the tool's output.
	Refusal string
}

// ReadOnlyFile is the file each Write aims at, in the fixture's workdir.
const ReadOnlyFile = "target.txt"

// readOnly: a read-only turn (core.Turn.ReadOnly) refuses every write the
// model attempts, by the CLI's own means, and ends cleanly: whether the
// chat would approve the write (a turn that asks, answered Allow, in the
// plugin's bypass mode) or the CLI runs commands unasked. The model is
// told of the refusal.
func (s Suite) readOnly(t *testing.T) {
	if len(s.Writes) == 0 {
		t.Skip("the suite is given no writes to attempt")
	}
	for _, w := range s.Writes {
		for _, v := range []struct {
			name    string
			fixture func(t testing.TB, replies ...Reply) *Fixture
			ask     bool
		}{
			{"approved", s.Fixture, true},
			{"unasked", s.Unasked, false},
		} {
			t.Run(w.Name+"/"+v.name, func(t *testing.T) {
				t.Parallel()
				f := v.fixture(t)
				path := filepath.Join(f.Workdir, ReadOnlyFile)
				if !w.Creates {
					if err := os.WriteFile(path, []byte("original\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				f.Model.Push(Reply{Text: []string{"Writing."}, Tool: w.Call(path)}, Reply{Text: []string{"Refused."}})
				turn := f.Turn("change "+ReadOnlyFile, "", v.ask)
				turn.ReadOnly = true
				if v.ask {
					turn.Mode = bypassMode(f.Plugin)
				}
				tr := RunAnswering(context.Background(), t, f.Plugin, turn, core.Answer{Decision: core.Allow})
				if tr.Err != nil || tr.Result.IsError {
					t.Fatalf("Run = %+v, %v; want a clean end", tr.Result, tr.Err)
				}
				b, err := os.ReadFile(path)
				switch {
				case w.Creates && err == nil:
					t.Errorf("%s was created: %q", ReadOnlyFile, b)
				case !w.Creates && string(b) != "original\n":
					t.Errorf("%s = %q, %v; want it unchanged", ReadOnlyFile, b, err)
				}
				reqs := f.Model.Requests()
				if len(reqs) < 2 {
					t.Fatalf("%d requests reached the model, want the call's answer too", len(reqs))
				}
				outs := reqs[len(reqs)-1].ToolOutputs()
				if !strings.Contains(strings.Join(outs, "\n"), w.Refusal) {
					t.Errorf("the model was told %q, want %q", outs, w.Refusal)
				}
			})
		}
	}
}

// bypassMode is the name of p's mode that runs tools with nobody
// approving them, or empty.
func bypassMode(p core.Plugin) string {
	if mp, ok := p.(core.ModeProvider); ok {
		for _, m := range mp.Modes() {
			if m.Bypass {
				return m.Name
			}
		}
	}
	return ""
}

package codex_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// patch is an apply_patch call of the model's.
func patch(body string) *plugintest.ToolCall {
	return &plugintest.ToolCall{Name: "apply_patch", Input: map[string]any{"input": "*** Begin Patch\n" + body + "*** End Patch\n"}}
}

// patchRejected is what Codex answers a patch in its read-only sandbox.
const patchRejected = "patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings"

// readOnlyWrites are the writes the model attempts in the suite's
// read-only turns: a shell command and patches.
var readOnlyWrites = []plugintest.Write{
	{Name: "shell", Creates: true, Refusal: "/bin/bash: line 1: target.txt: Read-only file system", Call: func(path string) *plugintest.ToolCall {
		return shell("echo changed > " + filepath.Base(path))
	}},
	{Name: "escalated", Creates: true, Refusal: "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never", Call: func(path string) *plugintest.ToolCall {
		return &plugintest.ToolCall{Name: "exec_command", Input: map[string]any{"cmd": "echo changed > " + filepath.Base(path),
			"sandbox_permissions": "require_escalated", "justification": "to write the file"}}
	}},
	{Name: "patch-add", Creates: true, Refusal: patchRejected, Call: func(path string) *plugintest.ToolCall {
		return patch("*** Add File: " + filepath.Base(path) + "\n+changed\n")
	}},
	{Name: "patch-update", Refusal: patchRejected, Call: func(path string) *plugintest.ToolCall {
		return patch("*** Update File: " + filepath.Base(path) + "\n@@\n-original\n+changed\n")
	}},
}

// TestMain lets this test binary apply a Landlock sandbox, as `jakebot
// sandbox-exec` does, for the CLIs the tests wall in with one.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == cliproc.SandboxExecCommand {
		fmt.Fprintln(os.Stderr, cliproc.SandboxExec(os.Args[2:]))
		os.Exit(126)
	}
	os.Exit(m.Run())
}

// Behind Landlock, which Codex's own sandbox (a bwrap) cannot nest in, a
// turn that may write runs danger-full-access, the bot's sandbox bounding
// it; a read-only turn keeps Codex's read-only sandbox, where the shell's
// write and the patch both fail.
func TestReadOnlyBehindLandlock(t *testing.T) {
	t.Parallel()
	sb := plugintest.Sandbox(t, cliproc.SandboxLandlock, "")
	if sb.Nests() {
		t.Skip("Codex's sandbox nests in this Landlock")
	}
	for _, w := range readOnlyWrites {
		if w.Name == "escalated" {
			continue // refused by the approval policy alone
		}
		t.Run(w.Name, func(t *testing.T) {
			t.Parallel()
			f := newWalledFixture(t, sb)
			path := filepath.Join(f.Workdir, plugintest.ReadOnlyFile)
			if !w.Creates {
				if err := os.WriteFile(path, []byte("original\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f.Model.Push(plugintest.Reply{Tool: w.Call(path)}, plugintest.Reply{Text: []string{"Refused."}})
			turn := f.Turn("change "+plugintest.ReadOnlyFile, "", false)
			turn.ReadOnly = true
			tr := plugintest.RunTurn(context.Background(), t, f.Plugin, turn)
			if tr.Err != nil || tr.Result.IsError {
				t.Fatalf("Run = %+v, %v; want a clean end", tr.Result, tr.Err)
			}
			if b, err := os.ReadFile(path); w.Creates && err == nil || !w.Creates && string(b) != "original\n" {
				t.Errorf("%s = %q, %v; want it as it was", plugintest.ReadOnlyFile, b, err)
			}
			refusal := w.Refusal
			if w.Name == "shell" {
				// Its bwrap cannot start: the command does not run.
				refusal = "error building bubblewrap command: Permission denied (os error 13)"
			}
			reqs := f.Model.Requests()
			if outs := reqs[len(reqs)-1].ToolOutputs(); !strings.Contains(strings.Join(outs, "\n"), refusal) {
				t.Errorf("the model was told %q, want %q", outs, refusal)
			}
		})
	}
}

package codex_test

import (
	"path/filepath"

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

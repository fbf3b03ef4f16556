package plugintest

import (
	"context"
	"os"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// Sandbox returns the sandbox of mode (cliproc.SandboxBwrap or
// SandboxLandlock) for a test's CLIs, helper being what runs
// `helper sandbox-exec` for Landlock (empty: this test binary). When this
// machine cannot have it the test is skipped: without bwrap installed, or
// a kernel without Landlock. Bwrap missing fails the test when
// JAKEBOT_REQUIRE_CLIS=1 (CI installs bubblewrap with the CLIs).
func Sandbox(t testing.TB, mode, helper string) *cliproc.Sandbox {
	t.Helper()
	s, err := cliproc.NewSandbox(context.Background(), cliproc.SandboxConfig{Mode: mode, Helper: helper})
	if err != nil {
		if mode == cliproc.SandboxBwrap && os.Getenv("JAKEBOT_REQUIRE_CLIS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return s
}

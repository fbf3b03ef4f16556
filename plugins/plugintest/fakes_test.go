package plugintest

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// These tests run the real pinned CLIs against the fakes, as smoke tests of
// the fakes themselves; the plugins' end-to-end tests cover tool calls,
// resumption and cancellation.

// runCLI runs a real CLI with stdin closed and returns what it printed.
func runCLI(t *testing.T, dir string, env []string, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code == 0 {
		t.Fatalf("run %s: %v", bin, err)
	}
	t.Logf("%s exit %d\nstdout:\n%s\nstderr:\n%s", bin, code, out.String(), errb.String())
	return out.String(), errb.String(), code
}

func TestOpenAICodexText(t *testing.T) {
	bin := CLIPath(t, "codex")
	o := NewOpenAI(t, Reply{Text: []string{"Hello ", "from ", "fake."}})
	home, dir := Home(t), t.TempDir()
	args := append([]string{"exec", "--json", "--skip-git-repo-check", "-m", "gpt-5"}, CodexArgs(o)...)
	out, _, code := runCLI(t, dir, CodexEnv(t, home), bin, append(args, "say hi")...)
	if code != 0 || !strings.Contains(out, "Hello from fake.") {
		t.Errorf("codex exit %d, stdout %q; want 0 and the fake's text", code, out)
	}
}

func TestOpenAICodexError(t *testing.T) {
	bin := CLIPath(t, "codex")
	for _, status := range []int{400, 401, 500} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			o := NewOpenAI(t, Reply{Status: status, Message: "scripted failure"})
			home, dir := Home(t), t.TempDir()
			args := append([]string{"exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.5"}, CodexArgs(o)...)
			out, _, code := runCLI(t, dir, CodexEnv(t, home), bin, append(args, "say hi")...)
			// A 5xx is reported as "high demand", without the body.
			if code != 1 || !strings.Contains(out, `"turn.failed"`) || status < 500 && !strings.Contains(out, "scripted failure") {
				t.Errorf("codex exit %d, stdout %q; want 1 and turn.failed with the message", code, out)
			}
			if n := len(o.Requests()); n != 1 {
				t.Errorf("codex sent %d requests, want 1 (retries off)", n)
			}
		})
	}
}

func TestGeminiCLIText(t *testing.T) {
	bin := CLIPath(t, "gemini")
	g := NewGemini(t, Reply{Text: []string{"Hello ", "from ", "fake."}})
	home, dir := Home(t), t.TempDir()
	out, _, code := runCLI(t, dir, GeminiEnv(t, g, home), bin, "-p", "say hi", "-o", "stream-json", "-m", "gemini-2.5-flash")
	if code != 0 || !strings.Contains(out, `"status":"success"`) {
		t.Errorf("gemini exit %d, stdout %q; want 0 and success", code, out)
	}
	for _, r := range g.Requests() {
		t.Logf("request %s", r.Path)
	}
}

func TestGeminiCLIError(t *testing.T) {
	bin := CLIPath(t, "gemini")
	for _, status := range []int{400, 401} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			g := NewGemini(t, Reply{Status: status, Message: "scripted failure"})
			home, dir := Home(t), t.TempDir()
			out, _, code := runCLI(t, dir, GeminiEnv(t, g, home), bin, "-p", "say hi", "-o", "stream-json", "-m", "gemini-2.5-flash")
			if code == 0 || !strings.Contains(out, `"status":"error"`) || !strings.Contains(out, "scripted failure") {
				t.Errorf("gemini exit %d, stdout %q; want non-zero and an error result with the message", code, out)
			}
			if n := len(g.Requests()); n != 1 {
				t.Errorf("gemini sent %d requests, want 1", n)
			}
		})
	}
}

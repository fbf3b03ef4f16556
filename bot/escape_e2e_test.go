package bot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// escapingPlugins is a PLUGINS_FILE of two shell CLIs: daemon leaves a
// descendant outside its process group and without its run's mark,
// holding its output (it waits until it has left, then prints started);
// deaf ignores SIGTERM and has an hour to stop. Their processes carry
// mark. Once daemon has printed started, it creates escaped.said.
func escapingPlugins(t *testing.T, mark string) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "plugins.yaml")
	markKey, markValue, _ := strings.Cut(mark, "=")
	daemon := `setsid env -u JAKEBOT_RUN sh -c 'echo $$ >"$ESCAPED.tmp"; mv "$ESCAPED.tmp" "$ESCAPED"; exec sleep 300' & ` +
		`until [ -s "$ESCAPED" ]; do sleep 0.01; done; echo started; : >"$ESCAPED.said"; sleep 300`
	yaml := fmt.Sprintf(`plugins:
  - id: daemon
    bin: sh
    args: ["-c", %q, "sh", "{message}"]
    mode: plain
    env: {%s: %q, ESCAPED: %q}
  - id: deaf
    bin: sh
    args: ["-c", "trap '' TERM; echo started; sleep 300", "sh", "{message}"]
    mode: plain
    grace: 1h
    env: {%s: %q}
`, daemon, markKey, markValue, filepath.Join(dir, "escaped"), markKey, markValue)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// /stop ends a turn whose CLI left a detached descendant holding its
// output (setsid, without the run's mark): the turn ends, the descendant
// is killed with it, and the bot goes on. A turn whose CLI ignores SIGTERM
// past the shutdown deadline does not outlive jakebot either.
func TestDetachedDescendantsEndWithTheTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mark, alive := plugintest.ProcessMarker(t)
	plugins := escapingPlugins(t, mark)
	said := filepath.Join(filepath.Dir(plugins), "escaped.said")
	// Without the sandbox, whose PID namespace would end the detached
	// descendant with the CLI anyway, and which hides $ESCAPED: the
	// group, mark and orphan sweeps alone.
	b := startBinary(t, f.workdir, f.binEnv("SANDBOX=off", "STATE_FILE=off", "WARM_TTL=0", "CONSOLE_INPUT=typed", "SHUTDOWN_GRACE=1ms", "SHUTDOWN_DEADLINE=200ms",
		"PLUGINS_FILE="+plugins))
	b.say("/daemon start", "go")
	b.expect(`started in`)
	// The console shows a reply once it is final: the processes say the
	// CLI runs (sh and its sleep, the detached sleep), and the file that
	// it has written started (three processes alone could be sh, the
	// detached sleep and one of the loop's short sleeps, before it wrote).
	waitFor(t, "the CLI and its detached descendant", func() bool {
		_, err := os.Stat(said)
		return err == nil && len(alive()) == 3
	})
	b.say("/stop")
	b.expect(`(?s)started.*Stopped\. The conversation continues with your next message\.`)
	if pids := alive(); len(pids) != 0 {
		t.Fatalf("processes %v outlived the stopped turn", pids)
	}

	b.say("/deaf start", "go")
	b.expect(`started in`)
	waitFor(t, "the CLI", func() bool { return len(alive()) == 2 })
	b.signal(syscall.SIGTERM)
	b.expect(`The bot is restarting`)
	// The turn is cancelled, the CLI ignores it: jakebot exits after the
	// router's stop deadline (SHUTDOWN_DEADLINE) all the same, and takes
	// the CLI with it.
	if code := b.wait(); code != 0 {
		t.Fatalf("exit code %d, want 0\n%s", code, b.stderr.String())
	}
	if !strings.Contains(b.stderr.String(), `shutting down without them" deadline=200ms`) {
		t.Errorf("jakebot did not give up on the deaf turn after SHUTDOWN_DEADLINE:\n%s", b.stderr.String())
	}
	if pids := alive(); len(pids) != 0 {
		t.Fatalf("processes %v outlived jakebot", pids)
	}
}

// SANDBOX=landlock, for where bwrap cannot run: jakebot starts the real
// Claude Code as `jakebot sandbox-exec …`, which restricts itself with
// Landlock and becomes the CLI. Its shell tool reads neither the .env
// beside the workdir nor another CLI's environment, nor writes beside
// it, and the turn answers.
func TestLandlockWallsClaude(t *testing.T) {
	t.Parallel()
	if _, err := cliproc.NewSandbox(context.Background(), cliproc.SandboxConfig{Mode: cliproc.SandboxLandlock, Helper: buildJakebot(t)}); err != nil {
		t.Skip(err)
	}
	probe := plugintest.NewWallProbe(t, nil)
	f := newFixture(t, plugintest.Reply{Tool: &plugintest.ToolCall{Name: "Bash", Input: map[string]any{"command": probe.Command, "description": "Probe"}}},
		plugintest.Reply{Text: []string{"Walled by Landlock."}})
	b := startBinary(t, f.workdir, f.binEnv("SANDBOX=landlock", "STATE_FILE=off", "WARM_TTL=0", "CLAUDE_ARGS=--allowedTools Bash"))
	b.say("/claude start", "probe the walls")
	b.expect(`Walled by Landlock\.`)
	probe.Check(t, f.model.Requests(), f.workdir)
	if !strings.Contains(b.stderr.String(), "mode=landlock") {
		t.Errorf("start-up does not say the sandbox is Landlock:\n%s", b.stderr.String())
	}
}

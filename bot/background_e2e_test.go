package bot_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Background work longer than the CLI's grace (issue 48), with the real
// Claude Code: its command waits for a file the test writes only past
// grace of real time after the turn answered. Real time is the point:
// with its input closed the CLI winds its background work down on its own
// clock (five seconds, plugins/claude/FORMAT.md), so the bot must keep
// the CLI's stdin open, and the turn, until the work ends.
const grace = 10 * time.Second

// backgroundJob is the model's side: a background command that writes
// bg.txt once the file go exists, its answer, and its answer to the
// command's end.
func backgroundJob() []plugintest.Reply {
	return []plugintest.Reply{
		{Tool: &plugintest.ToolCall{ID: "toolu_bg1", Name: "Bash", Input: map[string]any{
			"command":     "while [ ! -f go ]; do sleep 0.1; done; echo done > bg.txt",
			"description": "Slow background job", "run_in_background": true}}},
		{Text: []string{"It runs in the background."}},
		{Text: []string{"The background job finished."}},
	}
}

// releaseAfter writes the file the job waits for, grace from now.
func (f *fixture) releaseAfter(d time.Duration) {
	time.AfterFunc(d, func() {
		if err := os.WriteFile(filepath.Join(f.workdir, "go"), nil, 0o644); err != nil {
			f.t.Error(err)
		}
	})
}

// jobDone reports whether the background command finished its work.
func (f *fixture) jobDone() bool {
	_, err := os.Stat(filepath.Join(f.workdir, "bg.txt"))
	return err == nil
}

// A script on a pipe waits for the turn's background work as for the
// turn: the line after it and the end of input wait until the work has
// ended and the agent has answered it, all in the turn's one reply.
func TestConsoleScriptWaitsForBackgroundWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backgroundJob()...)
	c := f.start(f.config("--allowedTools", "Bash"))
	c.say("/claude start", "start the job", "/status")
	c.in.Close() // the end of input waits too
	c.expect(`conversation started`)
	<-f.model.Arrived()
	<-f.model.Arrived() // the answer's request: the command runs in the background
	f.releaseAfter(grace)
	reply := c.expect(`It runs in the background\.`, `✓ Background work ended: 1 task — Slow background job`,
		`↳ Background command "Slow background job" completed \(exit code 0\)`, `The background job finished\.`)
	if strings.Index(reply, "The background job finished.") < strings.Index(reply, "It runs in the background.") {
		t.Errorf("reply %q: the answer to the work before the turn's own", reply)
	}
	c.expect(`State: idle`)
	if err := <-c.done; err != nil {
		t.Fatalf("bot exited with %v", err)
	}
	if !f.jobDone() {
		t.Error("the background command did not finish")
	}
}

// On Telegram the reply says what runs in the background while it runs,
// and goes on with the work's end and the agent's answer to it; /stop
// meanwhile ends the turn with the work, leaving no process behind.
func TestBackgroundWorkOnTelegram(t *testing.T) {
	t.Parallel()
	for _, stop := range []bool{false, true} {
		t.Run(map[bool]string{false: "the work ends", true: "stopped"}[stop], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backgroundJob()...)
			cfg := f.config("--allowedTools", "Bash")
			c := runChat(t, cfg, openTelegram(t, &cfg))
			c.start("claude")
			c.say("start the job")
			c.expect(`runs in the background`, `⏳ Background: 1 task — Slow background job`, `It runs in the background\.`)
			if stop {
				c.say("/stop")
				c.expect(`Stopped\.`)
				if pids := f.alive(); len(pids) != 0 {
					t.Fatalf("processes %v still running after /stop", pids)
				}
				return
			}
			f.releaseAfter(grace)
			c.expect(`✓ Background work ended: 1 task — Slow background job`, `↳ Background command "Slow background job" completed \(exit code 0\)`,
				`The background job finished\.`, `— \d+\.\ds`)
			if !f.jobDone() {
				t.Error("the background command did not finish")
			}
		})
	}
}

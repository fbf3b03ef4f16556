package bot_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/bot"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// One bot, two processes' worth of it: the gateway on the console and a
// runner, both on a real NATS server in the test process. The turn runs
// the real Claude CLI on the runner, in the runner's roots; the gateway
// has no CLI and no such directory.
func TestRunnerOnAnotherMachine(t *testing.T) {
	t.Parallel()
	const runnerKey = "sk-ant-api03-only-on-box2-0007"
	f := newFixture(t, plugintest.Reply{Text: []string{"Hello from box2."}}, plugintest.Reply{Text: []string{"Still box2."}},
		plugintest.Reply{Text: []string{"Your key is " + runnerKey + "."}})
	ns := runNATS(t)

	rcfg := f.config()
	rcfg.NATS = remote.Config{URL: ns.ClientURL(), RunnerName: "box2"}
	rcfg.Secrets = []string{runnerKey} // the runner's own, as its environment would give them
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.RunRunner(ctx, rcfg, bot.Stdio{Err: t.Output()}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runner: %v", err)
		}
	})

	gateway := t.TempDir()
	gcfg := bot.Config{AllowedRoots: []string{gateway}, TurnTimeout: time.Minute, QueueLimit: 5, LogLevel: "debug",
		NATS:   remote.Config{URL: ns.ClientURL()},
		Claude: claude.Config{Settings: cliproc.Settings{Bin: filepath.Join(gateway, "no-claude-here")}}}
	c := f.start(gcfg)
	for {
		c.say("/runners")
		if got := c.expect(`Runners|No runner`); strings.Contains(got, "box2 (online): claude") {
			break
		}
	}
	c.say("/claude start box2:" + f.workdir)
	c.expect(`started in box2:` + f.workdir)
	c.say("say hello")
	c.expect(`Hello from box2\.`)
	c.say("/claude start box2:" + gateway)
	c.expect(`outside`)
	c.close()

	// A new gateway finds the conversation in NATS's key-value bucket and
	// goes on in its session on box2.
	c = f.start(gcfg)
	c.say("/status", "are you there?")
	c.expect(`box2:` + f.workdir)
	c.expect(`Still box2\.`)
	// The runner's Claude CLI prints the runner's key: the chat gets it
	// blanked out by the runner (the gateway does not know it).
	c.say("what is my key?")
	if got := c.expect(`Your key is \[REDACTED\]\.`); strings.Contains(got, runnerKey) {
		t.Errorf("the chat got the runner's key: %s", got)
	}
	c.close()
	if reqs := f.model.Requests(); len(reqs) < 3 || !strings.Contains(reqs[len(reqs)-2].Text(), "say hello") {
		t.Error("the second gateway's turn did not resume the first's session on box2")
	}
	if n := len(f.model.Requests()); n == 0 {
		t.Error("the model got no request: the turn did not run on the runner")
	}
	sessions, _ := filepath.Glob(filepath.Join(f.home, ".claude", "projects", "*", "*.jsonl"))
	if len(sessions) == 0 {
		t.Error("the runner's Claude CLI wrote no session")
	}
}

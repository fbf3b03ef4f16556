package discord

import (
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestClaudeThroughDiscord runs the real Claude Code CLI against the fake
// model, through the router and the adapter, on the fake Discord: start
// in a channel, a streamed reply in the thread, a second turn that
// resumes the first, and no process left behind.
func TestClaudeThroughDiscord(t *testing.T) {
	t.Parallel()
	bin := plugintest.CLIPath(t, "claude")
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"The secret ", "word is ", "pineapple."}},
		plugintest.Reply{Text: []string{"It was pineapple."}},
	)
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	plugin := claude.New(claude.Config{Bin: bin, PermissionMode: "acceptEdits", ConfigDir: filepath.Join(home, ".claude"),
		Env: append(plugintest.ClaudeEnv(t, model, home), mark)}, slog.New(slog.NewTextHandler(t.Output(), nil)))
	h := newHarness(t, plugin, nil)

	thread := h.start(h.owner)
	h.fake.Say(h.owner, thread, "remember a secret word")
	first := h.fake.WaitMessage(thread, func(m platformtest.DiscordMessage) bool {
		return m.AuthorID == h.fake.BotID && regexp.MustCompile(`— \d+\.\ds`).MatchString(m.Content)
	})
	if !strings.HasPrefix(first.Content, "The secret word is pineapple.") {
		t.Errorf("first reply = %q", first.Content)
	}
	h.fake.Say(h.owner, thread, "what was it?")
	h.waitBot(thread, "It was pineapple.")
	h.router.Wait()

	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model saw %d requests, want 2", len(reqs))
	}
	if text := reqs[1].Text(); !strings.Contains(text, "remember a secret word") || !strings.Contains(text, "pineapple") {
		t.Errorf("the second turn did not resume the first: %q", text)
	}
	checkBudget(t, writes(h.fake, thread), h.cfg.EditInterval)
}

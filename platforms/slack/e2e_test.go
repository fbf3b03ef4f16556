package slack_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestClaudeThroughSlack runs the real Claude Code CLI against the fake
// model, through the router and the adapter, against the fake Slack: a
// thread started by a slash command streams the answer, and a second
// message in the thread resumes the session.
func TestClaudeThroughSlack(t *testing.T) {
	t.Parallel()
	bin := plugintest.CLIPath(t, "claude")
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"The secret ", "word is ", "**pineapple** & more."}},
		plugintest.Reply{Text: []string{"It was pineapple."}},
	)
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	workdir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	plugin := claude.New(claude.Config{PermissionMode: "acceptEdits", ConfigDir: filepath.Join(home, ".claude"),
		Settings: cliproc.Settings{Bin: bin, Env: append(plugintest.ClaudeEnv(t, model, home), mark)}}, nil)
	// Registered first, so it runs once the router has shut down, and
	// even when the bot fails to start.
	t.Cleanup(func() {
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	h := start(t, setup{plugin: plugin, workdir: workdir})

	thread := h.startThread(alice, general)
	h.fake.Post(t, alice, general, thread, "remember a secret word")
	footer := regexp.MustCompile(`\n\n_— \d+\.\ds · \$\d+\.\d{4}_$|\n\n_— \d+\.\ds_$`)
	replies := h.waitReply(general, thread, "*pineapple* &amp; more.\n\n_— ")
	if got := replies[len(replies)-1].Text; !strings.HasPrefix(got, "The secret word is *pineapple* &amp; more.") || !footer.MatchString(got) {
		t.Errorf("reply = %q, want the answer in mrkdwn and a footer", got)
	}
	// Bob continues the thread; the CLI resumes the session.
	h.fake.Post(t, bob, general, thread, "what was it?")
	h.waitReply(general, thread, "It was pineapple.")
	h.fake.WaitFor(t, "the second turn's footer", func() bool {
		replies := h.fake.Replies(general, thread)
		return footer.MatchString(replies[len(replies)-1].Text)
	})
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model saw %d requests, want 2", len(reqs))
	}
	if text := reqs[1].Text(); !strings.Contains(text, "remember a secret word") || !strings.Contains(text, "pineapple") {
		t.Errorf("second request does not carry the first exchange: %q", text)
	}
	for _, c := range h.fake.Calls() {
		if c.Method == "chat.update" && c.Error != "" {
			t.Errorf("%s failed: %s", c.Method, c.Error)
		}
	}
}

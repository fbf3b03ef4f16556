package mattermost_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestClaudeThroughMattermost runs the real Claude Code CLI against the
// fake model, through the router and the adapter, against the fake
// server: a thread started by a command streams the answer as markdown,
// and bob's message in the thread resumes the session.
func TestClaudeThroughMattermost(t *testing.T) {
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
	// Registered first, so it runs once the router has shut down.
	t.Cleanup(func() {
		if pids := alive(); len(pids) != 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	h := start(t, setup{plugin: plugin, workdir: workdir})
	ch := h.fake.Channel
	thread := h.startThread(h.alice, ch)
	h.fake.Say(t, h.alice, ch, thread, "remember a secret word")
	footer := regexp.MustCompile(`\n\n— \d+\.\ds · \$\d+\.\d{4}$|\n\n— \d+\.\ds$`)
	replies := h.waitReply(ch, thread, "**pineapple** & more.\n\n— ")
	if got := replies[len(replies)-1].Message; !strings.HasPrefix(got, "The secret word is **pineapple** & more.") || !footer.MatchString(got) {
		t.Errorf("reply = %q, want the answer in markdown and a footer", got)
	}
	h.fake.Say(t, h.bob, ch, thread, "what was it?")
	h.waitReply(ch, thread, "It was pineapple.")
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model saw %d requests, want 2", len(reqs))
	}
	if text := reqs[1].Text(); !strings.Contains(text, "remember a secret word") || !strings.Contains(text, "pineapple") {
		t.Errorf("second request does not carry the first exchange: %q", text)
	}
	if failed := h.fake.Failed(); len(failed) != 0 {
		t.Errorf("calls failed: %+v", failed)
	}
}

package telegram

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// TestClaudeEndToEnd drives the real Claude CLI, talking to the fake
// model, from a private chat on the fake Telegram: a streamed reply
// rendered as HTML, then the session listed as a button that resumes it.
func TestClaudeEndToEnd(t *testing.T) {
	t.Parallel()
	bin := plugintest.CLIPath(t, "claude")
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"Hello ", "from **the** ", "fake model & <friends>.\n\n```go\nx := 1 < 2\n```"}},
		plugintest.Reply{Text: []string{"Still here."}},
	)
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) > 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	plugin := claude.New(claude.Config{
		Bin:            bin,
		PermissionMode: "acceptEdits",
		ConfigDir:      filepath.Join(home, ".claude"),
		Env:            append(plugintest.ClaudeEnv(t, model, home), mark),
	}, nil)
	h := newHarness(t, func(_ *Config, o *Options) { o.Plugins = []core.Plugin{plugin} })
	dm := alice.Private()

	h.says(dm, alice, 0, "/claude start")
	h.srv.UserSays(dm, alice, 0, "say hello")
	h.until("the reply's footer", func() bool { return strings.Contains(h.last(dm.ID), "— ") })
	msgs := h.srv.Messages(dm.ID)
	reply := msgs[len(msgs)-1]
	for _, want := range []string{"Hello from <b>the</b> fake model &amp; &lt;friends&gt;.", `<pre><code class="language-go">x := 1 &lt; 2</code></pre>`} {
		if !strings.Contains(reply.Text, want) {
			t.Errorf("reply HTML %q lacks %q", reply.Text, want)
		}
	}

	h.says(dm, alice, 0, "/claude conversations")
	list := h.srv.Messages(dm.ID)[len(h.srv.Messages(dm.ID))-1]
	var kb struct {
		InlineKeyboard [][]struct {
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(list.Markup), &kb); err != nil || len(kb.InlineKeyboard) != 1 {
		t.Fatalf("conversations listing %q has markup %q (%v), want one button", list.Text, list.Markup, err)
	}
	data := kb.InlineKeyboard[0][0].CallbackData
	session, ok := strings.CutPrefix(data, "/claude resume ")
	if !ok {
		t.Fatalf("button data %q is not a resume command", data)
	}
	id := h.srv.PressButton(alice, list, data)
	h.until("the resume", func() bool {
		return h.srv.CallbackAnswered(id) && strings.Contains(h.last(dm.ID), "Resumed Claude Code conversation "+session)
	})

	h.srv.UserSays(dm, alice, 0, "are you there?")
	h.until("the second reply", func() bool { return strings.Contains(h.last(dm.ID), "Still here.") })
	reqs := model.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Text(), "say hello") {
		t.Errorf("the resumed turn did not carry the first exchange (%d requests)", len(reqs))
	}
}

package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/formatter"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
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
	plugin := claude.New(claude.Config{PermissionMode: "acceptEdits", ConfigDir: filepath.Join(home, ".claude"),
		Settings: cliproc.Settings{Bin: bin, Env: append(plugintest.ClaudeEnv(t, model, home), mark)}}, nil)
	h := newHarness(t, func(_ *Config, o *Options) { o.Plugins = []core.Plugin{plugin} })
	dm := alice.Private()

	h.says(dm, alice, 0, "/claude start")
	h.srv.UserSays(dm, alice, 0, "say hello")
	h.until("the reply's footer", func() bool { return strings.Contains(h.last(dm.ID), "— ") })
	// The footer is the reply's last edit; the turn ends just after it,
	// and /claude resume is refused while a turn runs.
	h.router.Wait()
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

// TestFilesEndToEnd drives the real Claude CLI from the fake Telegram with
// files: a photo reaches the model as an image block with the bytes the
// user sent, a voice note is heard and its words sent, and a long answer
// comes as its first page and answer.md.
func TestFilesEndToEnd(t *testing.T) {
	t.Parallel()
	bin := plugintest.CLIPath(t, "claude")
	var long strings.Builder
	for i := range 400 {
		fmt.Fprintf(&long, "Step %d: check the build output once more.\n", i)
	}
	model := plugintest.NewAnthropic(t,
		plugintest.Reply{Text: []string{"A red diagonal."}},
		plugintest.Reply{Text: []string{"Fixed it."}},
		plugintest.Reply{Text: []string{long.String()}},
	)
	home := plugintest.Home(t)
	mark, alive := plugintest.ProcessMarker(t)
	t.Cleanup(func() {
		if pids := alive(); len(pids) > 0 {
			t.Errorf("processes %v outlived the test", pids)
		}
	})
	plugin := claude.New(claude.Config{PermissionMode: "acceptEdits", ConfigDir: filepath.Join(home, ".claude"),
		Settings: cliproc.Settings{Bin: bin, Env: append(plugintest.ClaudeEnv(t, model, home), mark)}}, nil)
	h := newHarnessRouting(t, func(rc *core.RouterConfig) {
		rc.Transcribe = func(ctx context.Context, file string) (string, error) {
			data, err := os.ReadFile(file)
			return "please " + string(data), err
		}
		rc.LongReplyPages, rc.Document = 2, formatter.MarkdownText
	}, func(_ *Config, o *Options) { o.Plugins = []core.Plugin{plugin} })
	dm := alice.Private()
	h.says(dm, alice, 0, "/claude start")

	shot, b64 := plugintest.PNG(t, t.TempDir(), "shot.png")
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	h.srv.UserSends(dm, alice, "photo", "shot.png", png, "what is wrong here?")
	h.until("the photo's answer", func() bool {
		return strings.Contains(h.last(dm.ID), "A red diagonal.") && strings.Contains(h.last(dm.ID), "— ")
	})
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), b64) ||
		!strings.Contains(reqs[0].LastUserText(), "what is wrong here?") {
		t.Errorf("the model did not get the photo and its caption")
	}

	h.srv.UserSends(dm, alice, "voice", "", []byte("fix the build"), "")
	h.until("the voice note's answer", func() bool {
		return strings.Contains(h.last(dm.ID), "Fixed it.") && strings.Contains(h.last(dm.ID), "— ")
	})
	if !slices.ContainsFunc(h.srv.Messages(dm.ID), func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "🎤 Heard: please fix the build")
	}) {
		t.Error("the bot did not show what it heard")
	}
	if reqs := model.Requests(); len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "please fix the build") {
		t.Errorf("the model did not get the voice note's words")
	}

	before := len(h.srv.Messages(dm.ID))
	h.srv.UserSays(dm, alice, 0, "list every step")
	h.until("the long answer's file", func() bool { return len(h.srv.Documents(dm.ID)) == 1 })
	doc := h.srv.Documents(dm.ID)[0]
	if doc.Name != "answer.md" || !strings.Contains(string(doc.Data), "Step 0: check") || !strings.Contains(string(doc.Data), "Step 399: check") {
		t.Errorf("sent %s:\n%.300s", doc.Name, doc.Data)
	}
	msgs := h.srv.Messages(dm.ID)[before:]
	if len(msgs) != 3 || !strings.HasPrefix(msgs[0].Text, "Step 0: check") ||
		!strings.Contains(msgs[1].Text, "ran to 5 messages: the first is above, and all of it is in answer.md") {
		t.Errorf("the long answer took %d messages, want its first page, the note and the file", len(msgs))
	}
}

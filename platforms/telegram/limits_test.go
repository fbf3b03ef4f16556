package telegram

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/telegram/telegramtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// A turn refused by a usage window says when it goes on with inline
// buttons: Cancel removes the continuation, Start with Codex now sends
// the message to a new Codex conversation in the chat. Pressing is the
// callback query Telegram sends; the continuation, an hour away, stays
// pending meanwhile (issue 30).
func TestContinuationButtons(t *testing.T) {
	t.Parallel()
	for _, press := range []string{"Cancel", "Start with Codex now"} {
		t.Run(press, func(t *testing.T) {
			t.Parallel()
			claude := &plugintest.Scripted{Script: plugintest.Refused(coretest.Epoch.Add(time.Hour))}
			codex := &plugintest.Scripted{PluginID: "codex", PluginName: "Codex"}
			h := newHarnessRouting(t, func(rc *core.RouterConfig) {
				reg, err := core.NewRegistry(claude, codex)
				if err != nil {
					t.Fatal(err)
				}
				rc.Plugins = reg
			}, func(_ *Config, o *Options) { o.Plugins = []core.Plugin{claude, codex} })
			h.drive = time.Minute
			dm := alice.Private()
			h.says(dm, alice, 0, "/claude start")
			h.srv.UserSays(dm, alice, 0, "fix the bug")
			h.until("the continuation", func() bool { return strings.Contains(h.last(dm.ID), "🔁 The Claude Code 5h window is used up") })
			msgs := h.srv.Messages(dm.ID)
			note := msgs[len(msgs)-1]
			bs := buttons(t, note)
			if want := []string{"Cancel=/unschedule 1", "Start with Codex now=/codex now 1"}; !slices.Equal(bs, want) {
				t.Fatalf("the continuation's buttons are %q, want %q", bs, want)
			}
			for _, b := range bs {
				if label, data, _ := strings.Cut(b, "="); label == press {
					h.srv.PressButton(alice, note, data)
				}
			}
			shows := func(text string) func() bool {
				return func() bool {
					return slices.ContainsFunc(h.srv.Messages(dm.ID), func(m telegramtest.Message) bool { return strings.Contains(plain(t, m), text) })
				}
			}
			if press == "Cancel" {
				h.until("the cancel", shows("Removed schedule #1"))
			} else {
				h.until("the start", shows("Codex conversation started in "+h.root))
				h.until("Codex's answer", shows("echo: fix the bug"))
				if turns := codex.Turns(); len(turns) != 1 || turns[0].Prompt != "fix the bug" {
					t.Errorf("Codex ran %+v, want the refused message", turns)
				}
			}
			if left := h.router.Conversations().Schedules(); len(left) != 0 {
				t.Errorf("schedules left: %+v", left)
			}
			if n := len(claude.Turns()); n != 1 {
				t.Errorf("Claude ran %d turns, want the refused one alone", n)
			}
		})
	}
}

package discord

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// A turn refused by a usage window says when it goes on with buttons:
// Cancel removes the continuation, Start with Codex now sends the message
// to a new Codex conversation in the thread (issue 30).
func TestContinuationButtons(t *testing.T) {
	t.Parallel()
	for _, press := range []string{"Cancel", "Start with Codex now"} {
		t.Run(press, func(t *testing.T) {
			t.Parallel()
			claude := &plugintest.Scripted{Script: plugintest.Refused(coretest.Epoch.Add(time.Hour))}
			codex := &plugintest.Scripted{PluginID: "codex", PluginName: "Codex"}
			h := newHarnessDriving(t, claude, nil, func(rc *core.RouterConfig) {
				reg, err := core.NewRegistry(claude, codex)
				if err != nil {
					t.Fatal(err)
				}
				rc.Plugins = reg
			}, time.Minute)
			thread := h.start(h.owner)
			h.fake.Say(h.owner, thread, "fix the bug")
			note := h.waitBot(thread, "🔁 The Claude Code 5h window is used up")
			bs := buttons(t, note)
			if want := []string{"Cancel=/unschedule 1", "Start with Codex now=/codex now 1"}; !slices.Equal(bs, want) {
				t.Fatalf("the continuation's buttons are %q, want %q", bs, want)
			}
			for _, b := range bs {
				if label, id, _ := strings.Cut(b, "="); label == press {
					h.fake.Press(h.owner, thread, note.ID, id)
				}
			}
			if press == "Cancel" {
				h.waitBot(thread, "Removed schedule #1")
			} else {
				h.waitBot(thread, "Codex conversation started in "+filepath.Join(h.root, "proj"))
				if got := <-codex.Started(); got.Prompt != "fix the bug" {
					t.Errorf("Codex got %q, want the refused message", got.Prompt)
				}
				h.waitBot(thread, "echo: fix the bug")
			}
			if left := h.router.Conversations().Schedules(); len(left) != 0 {
				t.Errorf("schedules left: %+v", left)
			}
		})
	}
}

// With REACTIONS on, the user's message shows its turn's state, one
// reaction at a time (PUT and DELETE .../reactions/{emoji}/@me); a 429 on
// a reaction holds nothing and loses nothing (issue 30).
func TestReactionsShowTheTurnsState(t *testing.T) {
	t.Parallel()
	// The turn ends only once its running state is shown: a turn that
	// ended first would skip it (reactions show the latest state), and
	// there would be no reaction to remove.
	running := make(chan struct{})
	plugin := &plugintest.Scripted{}
	plugin.Script = func(ctx context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
		select {
		case <-running:
		case <-ctx.Done():
			return core.TurnResult{}, ctx.Err()
		}
		return plugin.Echo(ctx, t, emit)
	}
	h := newHarnessRouting(t, plugin, nil, func(rc *core.RouterConfig) { rc.Reactions = true })
	thread := h.start(h.owner)
	const reactions = "channels/*/messages/*/reactions/*/@me"
	h.fake.RateLimit("DELETE", reactions, time.Second, 1)
	id := h.fake.Say(h.owner, thread, "hello")
	h.fake.WaitFor("the running reaction", func() bool {
		for _, m := range h.fake.Messages(thread) {
			if m.ID == id {
				return len(m.Reactions) == 1
			}
		}
		return false
	})
	close(running)
	h.waitBot(thread, "echo: hello")
	h.fake.WaitFor("✅ alone on the message", func() bool {
		for _, m := range h.fake.Messages(thread) {
			if m.ID == id {
				return slices.Equal(m.Reactions, []string{"✅"})
			}
		}
		return false
	})
	limited := 0
	for _, c := range h.fake.CallsTo("DELETE", reactions) {
		if c.Status == 429 {
			limited++
		}
	}
	if limited != 1 {
		t.Errorf("%d reaction removals were rate limited, want 1", limited)
	}
}

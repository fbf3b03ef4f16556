package slack_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/slack/slacktest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// A turn refused by a usage window says when it goes on with buttons:
// Cancel removes the continuation, Start with Codex now sends the message
// to a new Codex conversation in the thread. Pressing is the
// block_actions interaction Slack sends; the continuation, an hour away,
// stays pending meanwhile (issue 30).
func TestContinuationButtons(t *testing.T) {
	t.Parallel()
	for _, press := range []string{"Cancel", "Start with Codex now"} {
		t.Run(press, func(t *testing.T) {
			t.Parallel()
			claude := &plugintest.Scripted{Script: plugintest.Refused(coretest.Epoch.Add(time.Hour))}
			codex := &plugintest.Scripted{PluginID: "codex", PluginName: "Codex"}
			h := start(t, setup{drive: time.Minute, router: func(rc *core.RouterConfig) {
				reg, err := core.NewRegistry(claude, codex)
				if err != nil {
					t.Fatal(err)
				}
				rc.Plugins = reg
			}})
			thread := h.startThread(alice, general)
			h.fake.Post(t, alice, general, thread, "fix the bug")
			var note slacktest.Message
			for _, m := range h.waitReply(general, thread, "🔁 The Claude Code 5h window is used up") {
				if strings.Contains(m.Text, "🔁") {
					note = m
				}
			}
			bs := slackButtons(t, note)
			if want := []string{"Cancel=/unschedule 1", "Start with Codex now=/codex now 1"}; !slices.Equal(bs, want) {
				t.Fatalf("the continuation's buttons are %q, want %q", bs, want)
			}
			for i, b := range bs {
				if label, value, _ := strings.Cut(b, "="); label == press {
					h.fake.PressButton(t, alice, note, "jakebot-choice-"+string(rune('0'+i)), value)
				}
			}
			if press == "Cancel" {
				h.waitReply(general, thread, "Removed schedule #1")
			} else {
				h.waitReply(general, thread, "Codex conversation started in "+filepath.Clean(h.root))
				h.waitReply(general, thread, "echo: fix the bug")
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

// slackButtons returns m's buttons as "text=value", in order.
func slackButtons(t *testing.T, m slacktest.Message) []string {
	t.Helper()
	var blocks []struct {
		Elements []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
			Text  struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(m.Blocks), &blocks); err != nil {
		t.Fatalf("blocks %q: %v", m.Blocks, err)
	}
	var out []string
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, e.Text.Text+"="+e.Value)
			}
		}
	}
	return out
}

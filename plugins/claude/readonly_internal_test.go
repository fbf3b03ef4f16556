package claude

import (
	"os"
	"testing"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
)

// A read-only turn's CLI asking to leave plan mode (ExitPlanMode) or to run
// a command is refused without asking the chat; the agent's question
// still reaches it.
func TestReadOnlyTurnPutsNoWriteToTheChat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		session string
		asked   bool
	}{
		{"plan", false},
		{"approval", false},
		{"question", true},
	} {
		t.Run(tc.session, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open("../../testdata/claude/control/" + tc.session + ".jsonl")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var asked []*core.Question
			_, err = cliproc.Replay(f, "Claude Code", func(link *cliproc.Link) cliproc.Protocol {
				c := newProtocol(link, t.TempDir())
				c.denyWrites()
				return c
			}, func(ev core.Event) {
				if ev.Kind == core.EventQuestion {
					asked = append(asked, ev.Question)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if (len(asked) > 0) != tc.asked {
				t.Errorf("questions %+v, want asked %v", asked, tc.asked)
			}
		})
	}
}

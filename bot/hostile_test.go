package bot_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// hostileBot is a router with the Claude plugin running the fake CLI in
// one mode, on a recording platform.
type hostileBot struct {
	t      *testing.T
	rec    *platformtest.Recorder
	router *core.Router
	handle core.Handler
	alive  func() []plugintest.Process
}

func newHostileBot(t *testing.T, bin string, idle time.Duration, env ...string) *hostileBot {
	t.Helper()
	mark, alive := plugintest.ProcessMarker(t)
	var router *core.Router
	checkNoneLeft(t, alive, &router)
	plugin := claude.New(claude.Config{Settings: cliproc.Settings{Bin: bin, Env: append(env, mark)}, ConfigDir: t.TempDir()}, nil)
	reg, err := core.NewRegistry(plugin)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := core.NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	access := core.NewAccess()
	access.Allow("fake", "alice")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	clock := coretest.NewInstantClock()
	router = core.NewRouter(ctx, core.RouterConfig{Plugins: reg, Access: access, Roots: roots, Clock: clock, IdleTimeout: idle, TurnTimeout: 2 * time.Minute}, nil)
	rec := platformtest.NewRecorder(clock, core.Limits{FinalOnly: true})
	return &hostileBot{t: t, rec: rec, router: router, handle: router.Attach(rec), alive: alive}
}

func (b *hostileBot) say(text string) {
	b.handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "alice", Channel: "c"}, Text: text})
}

// reply returns every page of the next reply: pages are written one after
// the other, and a reply ends with the page carrying its footer.
func (b *hostileBot) reply() string {
	b.t.Helper()
	var pages []string
	for {
		c := <-b.rec.Written()
		pages = append(pages, c.Text)
		if strings.Contains(c.Text, "— ") || strings.Contains(c.Text, "started in") || strings.Contains(c.Text, "**Error:**") && !strings.Contains(c.Text, "oversized") {
			return strings.Join(pages, "\n")
		}
	}
}

// The hostile cases and what the user sees for each. Messages that a user
// types are covered in core (TestRouterHostileMessages); here the CLI
// misbehaves.
func TestHostileCLIs(t *testing.T) {
	flood := 1_000_000
	if raceEnabled {
		flood = 100_000 // the race detector makes each event ~10x dearer
	}
	tests := []struct {
		name string
		bin  string
		env  []string
		idle time.Duration
		want []string
	}{
		{"prints invalid UTF-8", "", []string{"JAKEBOT_FAKE_CLAUDE=invalid-utf8"}, 0,
			[]string{"caf\uFFFD \uFFFD\uFFFD ok", "— 1.2s · $0.0125"}},
		{"a 100 MB line without newline", "", []string{"JAKEBOT_FAKE_CLAUDE=huge-line"}, 0,
			[]string{"Claude Code printed an oversized line, skipped (line too long: 104857600 bytes, over the 16777216 byte limit)",
				"Claude Code ended without a result (exit code 0)"}},
		{"a flood of tiny events", "", []string{"JAKEBOT_FAKE_CLAUDE=flood", "FAKE_EVENTS=" + itoa(flood)}, 0,
			[]string{"more messages of output were cut here", "xxxxxxxx", "— 1.2s · $0.0125"}},
		{"nothing, then hangs", "", []string{"JAKEBOT_FAKE_CLAUDE=silent-hang"}, 200 * time.Millisecond,
			[]string{"Idle timeout: Claude Code printed nothing for 200ms and was stopped"}},
		{"exits 0 with no result", "", []string{"JAKEBOT_FAKE_CLAUDE=no-result"}, 0,
			[]string{"Half an answer", "Claude Code ended without a result (exit code 0)"}},
		{"exits 137", "", []string{"JAKEBOT_FAKE_CLAUDE=exit-137"}, 0,
			[]string{"Working on it", "Claude Code ended without a result (exit code 137: killed, perhaps for lack of memory):\nKilled"}},
		{"killed by a signal", "", []string{"JAKEBOT_FAKE_CLAUDE=killed"}, 0,
			[]string{"Claude Code ended without a result (killed by a signal)"}},
		{"missing from PATH", "jakebot-no-such-claude", nil, 0,
			[]string{"Claude Code CLI not found (jakebot-no-such-claude). Install it with `npm install -g @anthropic-ai/claude-code`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := tt.bin
			if bin == "" {
				bin = os.Args[0]
			}
			b := newHostileBot(t, bin, tt.idle, tt.env...)
			b.say("/claude start")
			b.reply()
			b.say("go")
			got := b.reply()
			b.router.Wait()
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("reply lacks %q:\n%s", want, shorten(got))
				}
			}
			for _, c := range b.rec.Calls() {
				if n := len([]rune(c.Text)); n > b.rec.MaxLen {
					t.Errorf("a write of %d runes, over the platform's %d", n, b.rec.MaxLen)
				}
			}
			if n := len(b.rec.Messages()); n > core.MaxPages+1 { // + the "started" reply
				t.Errorf("%d messages, want at most %d", n, core.MaxPages+1)
			}
		})
	}
}

func shorten(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n…\n" + s[len(s)-1000:]
	}
	return s
}

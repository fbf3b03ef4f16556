package claude_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/claude"
	"github.com/jake-bot/jake-bot/plugins/cliproc"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// A background command that outlives the turn's result keeps the turn
// open: Claude Code reports it (core.Background, answered once the result
// came), and when it ends re-invokes the model, whose answer is the rest
// of the reply in the same turn. Cancelling the turn meanwhile (/stop,
// BACKGROUND_LIMIT) ends it at once, the command with it.
//
// The command waits for a file the test writes once the turn has
// answered: at once, or held back for longer than the CLI would wait for
// the work with its input closed (five seconds when it winds down
// without waiting; plugins/claude/FORMAT.md). That wait is real time on
// purpose: the CLI's own clock is what it tests, and the bot must keep
// the CLI's stdin open throughout.
func TestBackgroundWorkOutlivesTheResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		hold time.Duration // from the answer to the file's writing
		stop bool
	}{
		{"the work ends", 0, false},
		{"the work outlives the CLI's grace", 10 * time.Second, false},
		{"stopped", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixtureWith(t, []string{"--allowedTools", "Bash"},
				plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_bg1", Name: "Bash", Input: map[string]any{
					"command":     "while [ ! -f go ]; do sleep 0.05; done; echo bgdone > bg.txt; echo bgdone",
					"description": "Slow background job", "run_in_background": true}}},
				plugintest.Reply{Text: []string{"It runs in the background."}},
				plugintest.Reply{Text: []string{"The background job finished: bgdone."}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var out plugintest.TurnOutput
			var reports []string
			once := sync.Once{}
			released := make(chan struct{})
			release := sync.OnceFunc(func() {
				if err := os.WriteFile(filepath.Join(f.Workdir, "go"), nil, 0o644); err != nil {
					t.Error(err)
				}
				close(released)
			})
			// A plugin that never says the turn answered would wait for
			// the command forever: the guard lets it end, and the test
			// fail.
			guard := time.AfterFunc(time.Minute, release)
			defer guard.Stop()
			res, err := f.Plugin.Run(ctx, f.Turn("start the job", "", false), func(ev core.Event) {
				mu.Lock()
				defer mu.Unlock()
				out.Events = append(out.Events, ev)
				if b := ev.Background; ev.Kind == core.EventBackground && b != nil {
					reports = append(reports, strings.Join(b.Tasks, ",")+map[bool]string{true: " (answered)"}[b.Answered])
					if b.Answered && len(b.Tasks) > 0 {
						once.Do(func() {
							switch {
							case tc.stop:
								cancel()
							case tc.hold > 0:
								time.AfterFunc(tc.hold, release)
							default:
								release()
							}
						})
					}
				}
			})
			t.Logf("events:\n%s", plugintest.FormatEvents(out.Events))
			if tc.stop {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Run = %+v, %v; want it cancelled", res, err)
				}
				return // NoLeaks checks that the command went with the CLI
			}
			select {
			case <-released:
			default:
				t.Fatalf("Run = %+v, %v before the work could end", res, err)
			}
			if err != nil || res.IsError {
				t.Fatalf("Run = %+v, %v", res, err)
			}
			want := []string{"Slow background job", "Slow background job (answered)", " (answered)"}
			if strings.Join(reports, "|") != strings.Join(want, "|") {
				t.Errorf("background reports %q, want %q", reports, want)
			}
			if text := out.Text(); !strings.Contains(text, "It runs in the background.") || !strings.Contains(text, "The background job finished: bgdone.") {
				t.Errorf("reply text %q, want both answers", text)
			}
			var ended bool
			for _, b := range out.Blocks(core.BlockStatus) {
				ended = ended || strings.Contains(b.Text, `Background command "Slow background job" completed`)
			}
			if !ended {
				t.Error("no line says the background command completed")
			}
			if _, err := os.Stat(filepath.Join(f.Workdir, "bg.txt")); err != nil {
				t.Errorf("the command did not finish: %v", err)
			}
		})
	}
}

// The turn Claude Code writes in answer to the end of background work
// that outlived the result may take the model longer than the CLI's exit
// grace: the CLI's stdin stays open until that turn's result, and the
// answer is the reply's. The model holds its answer past the grace, in
// real time, since the grace is the engine's own clock.
func TestTheAnswerToBackgroundWorkMayTakeLong(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release)
	f := newFixtureWith(t, []string{"--allowedTools", "Bash"},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_bg1", Name: "Bash", Input: map[string]any{
			"command":     "while [ ! -f go ]; do sleep 0.05; done; echo bgdone",
			"description": "Slow background job", "run_in_background": true}}},
		plugintest.Reply{Text: []string{"It runs in the background."}},
		plugintest.Reply{Text: []string{"The background job finished: bgdone."}, Hold: hold})
	go func() {
		for range 3 {
			<-f.Model.Arrived()
		}
		time.AfterFunc(cliproc.DefaultExitGrace+5*time.Second, release)
	}()
	once := sync.Once{}
	var out plugintest.TurnOutput
	res, err := f.Plugin.Run(context.Background(), f.Turn("start the job", "", false), func(ev core.Event) {
		out.Events = append(out.Events, ev)
		if b := ev.Background; ev.Kind == core.EventBackground && b != nil && b.Answered && len(b.Tasks) > 0 {
			once.Do(func() {
				if err := os.WriteFile(filepath.Join(f.Workdir, "go"), nil, 0o644); err != nil {
					t.Error(err)
				}
			})
		}
	})
	t.Logf("events:\n%s", plugintest.FormatEvents(out.Events))
	if err != nil || res.IsError {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if text := out.Text(); !strings.Contains(text, "The background job finished: bgdone.") {
		t.Errorf("reply text %q, want the answer to the work's end", text)
	}
}

// A message sent while the turn's background work runs after its result
// steers into the CLI, which lives on for the work: it runs the message
// as one more turn at once, and the reply holds its answer, then the
// work's. The inbox closes once the work has ended.
func TestMessageDuringBackgroundWork(t *testing.T) {
	t.Parallel()
	const note = "STEER: how is it going?"
	f := newFixtureWith(t, []string{"--allowedTools", "Bash"},
		plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_bg1", Name: "Bash", Input: map[string]any{
			"command":     "while [ ! -f go ]; do sleep 0.05; done; echo bgdone",
			"description": "Slow background job", "run_in_background": true}}},
		plugintest.Reply{Text: []string{"It runs in the background."}},
		plugintest.Reply{Text: []string{"Still running."}},
		plugintest.Reply{Text: []string{"The background job finished: bgdone."}})
	turn := f.Turn("start the job", "", false)
	turn.Inbox = &core.Inbox{}
	sent := make(chan error, 1)
	once := sync.Once{}
	release := func() {
		if err := os.WriteFile(filepath.Join(f.Workdir, "go"), nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	guard := time.AfterFunc(time.Minute, release) // a message never taken: the work still ends
	defer guard.Stop()
	var out plugintest.TurnOutput
	res, err := f.Plugin.Run(context.Background(), turn, func(ev core.Event) {
		out.Events = append(out.Events, ev)
		if b := ev.Background; ev.Kind == core.EventBackground && b != nil && b.Answered && len(b.Tasks) > 0 {
			once.Do(func() {
				go func() {
					for len(f.Model.Arrived()) > 0 {
						<-f.Model.Arrived() // the turn's own requests
					}
					err := turn.Inbox.Send(core.Steering{Prompt: note})
					sent <- err
					if err == nil {
						<-f.Model.Arrived() // the message's request
					}
					release()
				}()
			})
		}
	})
	t.Logf("events:\n%s", plugintest.FormatEvents(out.Events))
	if err != nil || res.IsError {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if err := <-sent; err != nil {
		t.Fatalf("Send during the background work = %v, want the message taken", err)
	}
	if text := out.Text(); !strings.Contains(text, "Still running.") || !strings.Contains(text, "The background job finished: bgdone.") {
		t.Errorf("reply text %q, want the message's answer, then the work's", text)
	}
	reqs := f.Model.Requests()
	if len(reqs) != 4 || !strings.Contains(reqs[2].Text(), note) {
		t.Errorf("the model saw %d requests, want the third to carry the message", len(reqs))
	}
	if turn.Inbox.Taking() {
		t.Error("the inbox still takes messages after the turn")
	}
}

// The CLI tells of its background work in four kinds of line, and the
// work is learnt from each alone: a stream that lacks the list
// (background_tasks_changed), or has only it, still keeps the turn open
// from the command's start to its end, and shows the end's notification.
// From the recorded session, its lines left out by kind.
func TestBackgroundFromEveryTaskLine(t *testing.T) {
	t.Parallel()
	recorded, err := os.ReadFile(filepath.Join(plugintest.ModuleRoot(), "testdata", "claude", "control", "background.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		drop []string // subtypes left out
	}{
		{"as recorded", nil},
		{"without the list", []string{"background_tasks_changed"}},
		{"only the list", []string{"task_started", "task_updated", "task_notification"}},
		{"only the start and the update", []string{"background_tasks_changed", "task_notification"}},
		{"only the start and the notification", []string{"background_tasks_changed", "task_updated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var kept []string
			for _, l := range strings.Split(string(recorded), "\n") {
				if !slices.ContainsFunc(tc.drop, func(s string) bool { return strings.Contains(l, `"subtype":"`+s+`"`) }) {
					kept = append(kept, l)
				}
			}
			var reports []string
			var ended bool
			_, err := claude.ReadStream(strings.NewReader(strings.Join(kept, "\n")), plugintest.RecordedWorkdir, func(ev core.Event) {
				if b := ev.Background; ev.Kind == core.EventBackground && b != nil {
					reports = append(reports, strings.Join(b.Tasks, ",")+map[bool]string{true: " (answered)"}[b.Answered])
				}
				if ev.Kind == core.EventBlock && strings.Contains(ev.Block.Text, `Background command "Slow background job" completed`) {
					ended = true
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"Slow background job", "Slow background job (answered)", " (answered)"}
			if !slices.Equal(reports, want) {
				t.Errorf("background reports %q, want %q", reports, want)
			}
			if notified := !slices.Contains(tc.drop, "task_notification"); ended != notified {
				t.Errorf("a line says the command completed: %v, want %v", ended, notified)
			}
		})
	}
}

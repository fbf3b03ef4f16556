package claude_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// A background command that outlives the turn's result keeps the turn
// open: Claude Code reports it (core.Background, answered once the result
// came), and when it ends re-invokes the model, whose answer is the rest
// of the reply in the same turn. Cancelling the turn meanwhile (/stop,
// BACKGROUND_LIMIT) ends it at once, the command with it.
func TestBackgroundWorkOutlivesTheResult(t *testing.T) {
	t.Parallel()
	for _, stop := range []bool{false, true} {
		name := map[bool]string{false: "the work ends", true: "stopped"}[stop]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixtureWith(t, []string{"--allowedTools", "Bash"},
				plugintest.Reply{Tool: &plugintest.ToolCall{ID: "toolu_bg1", Name: "Bash", Input: map[string]any{
					"command":     "while [ ! -f go ]; do sleep 0.05; done; echo bgdone",
					"description": "Slow background job", "run_in_background": true}}},
				plugintest.Reply{Text: []string{"It runs in the background."}},
				plugintest.Reply{Text: []string{"The background job finished: bgdone."}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var out plugintest.TurnOutput
			var reports []string
			once := sync.Once{}
			release := func() {
				if err := os.WriteFile(filepath.Join(f.Workdir, "go"), nil, 0o644); err != nil {
					t.Error(err)
				}
			}
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
							if stop {
								cancel()
							} else {
								release()
							}
						})
					}
				}
			})
			t.Logf("events:\n%s", plugintest.FormatEvents(out.Events))
			if stop {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Run = %+v, %v; want it cancelled", res, err)
				}
				return // NoLeaks checks that the command went with the CLI
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
		})
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

package plugintest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// steers: a message sent into a turn while its shell command runs
// reaches the model in the same turn, with the command's output; a CLI
// that cannot take one leaves its inbox closed.
func (s Suite) steers(t *testing.T) {
	const steered = "STEER: also say banana"
	cmd := "while [ ! -f go ]; do sleep 0.05; done; echo done"
	f := s.Unasked(t, Reply{Tool: s.Shell(cmd)}, Reply{Text: []string{"Done, banana."}})
	turn := f.Turn("run the slow command", "", false)
	turn.Inbox = &core.Inbox{}
	running := make(chan struct{})
	toolRuns := sync.OnceFunc(func() { close(running) })
	out := make(chan TurnOutput, 1)
	go func() {
		var tr TurnOutput
		tr.Result, tr.Err = f.Plugin.Run(context.Background(), turn, func(ev core.Event) {
			tr.Events = append(tr.Events, ev)
			if ev.Kind == core.EventBlock && ev.Block.Kind == core.BlockToolUse && ev.Block.Status == core.ToolRunning {
				toolRuns()
			}
		})
		out <- tr
	}()
	select {
	case <-running:
	case tr := <-out:
		t.Fatalf("the turn ended before its command ran: %+v, %v, %q", tr.Result, tr.Err, tr.Text())
	}
	err := turn.Inbox.Send(core.Steering{Prompt: steered})
	if !s.Steers {
		if err == nil {
			t.Error("a CLI that cannot be steered took a message")
		}
	} else if err != nil {
		t.Errorf("Send = %v, want the message taken", err)
	}
	if err := os.WriteFile(filepath.Join(f.Workdir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := <-out
	if tr.Err != nil || tr.Result.IsError || !strings.Contains(tr.Text(), "Done, banana.") {
		t.Fatalf("turn = %+v, %v, %q", tr.Result, tr.Err, tr.Text())
	}
	reqs := f.Model.Requests()
	if got := reqs[len(reqs)-1].Text(); strings.Contains(got, steered) != s.Steers {
		t.Errorf("the model's request after the command holds the steered message: %v, want %v\n%s", !s.Steers, s.Steers, got)
	}
	if turn.Inbox.Taking() {
		t.Error("the inbox still takes messages after the turn")
	}
}

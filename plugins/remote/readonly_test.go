package remote_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jake-bot/jake-bot/core"
)

// A runner announces its plugins' means to run a read-only turn, and the
// gateway's view of a plugin there answers ReadOnlyMeans with them; a
// read-only turn reaches the plugin there as one. A runner that announces
// none (as one of before) has its read-only turns refused by the gateway,
// before they reach it.
func TestReadOnlyTurnsOnARunner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, announced, means string
	}{
		{"announced", "Claude Code's plan mode", "Claude Code's plan mode on box2"},
		{"none", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			box2 := w.startRunner(runnerOpts{name: "box2", readOnly: tc.announced})
			w.startGateway()
			w.waitOnline("box2")
			p, err := w.gw.gw.Plugin("box2", "claude", core.Message{Key: key(admin), From: admin}, true)
			if err != nil {
				t.Fatal(err)
			}
			means, ok := p.(core.ReadOnlyPlugin).ReadOnlyMeans()
			if means != tc.means || ok != (tc.means != "") {
				t.Fatalf("ReadOnlyMeans = %q, %v; want %q", means, ok, tc.means)
			}
			_, err = p.Run(context.Background(), core.Turn{Key: key(admin), Author: admin, Workdir: box2.app(), Prompt: "review", ReadOnly: true}, func(core.Event) {})
			if !ok {
				if !errors.Is(err, core.ErrNoReadOnly) || len(box2.plugin.Turns()) != 0 {
					t.Errorf("Run = %v with %d turns on the runner; want ErrNoReadOnly and none", err, len(box2.plugin.Turns()))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if turn := recv(t, box2.plugin.Started(), "the read-only turn on box2"); !turn.ReadOnly {
				t.Errorf("the turn ran on box2 as %+v, want it read-only", turn)
			}
		})
	}
}

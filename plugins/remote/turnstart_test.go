package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/workspace"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// heldChecker is an instant plugin whose check of the session id "held"
// waits until released: a turn request that takes long to handle.
type heldChecker struct {
	*plugintest.Scripted
	checking chan struct{}
	release  chan struct{}
}

func (h *heldChecker) CheckSessionID(id string) error {
	if id == "held" {
		h.checking <- struct{}{}
		<-h.release
	}
	return nil
}

// A runner handles turn requests side by side: one slow to start does not
// hold up the next. Handled one after the other, a thousand turns asked at
// once made the last wait past the gateway's request timeout, and they
// failed (issue 33's load curve: 460 of 1,000 replies lost).
func TestARunnerStartsTurnsSideBySide(t *testing.T) {
	t.Parallel()
	url := runNATS(t, nil)
	plugin := &heldChecker{Scripted: &plugintest.Scripted{Script: instant, Unrecorded: true},
		checking: make(chan struct{}), release: make(chan struct{})}
	dir := t.TempDir()
	reg, _ := core.NewRegistry(plugin)
	roots, _ := core.NewRoots([]string{dir})
	gw, err := remote.NewGateway(context.Background(), connect(t, url), remote.GatewayConfig{OfflineAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	r, err := remote.NewRunner(connect(t, url, remote.RunnerInbox("box2")), remote.RunnerConfig{Name: "box2", Plugins: reg,
		Workspace: workspace.Machine{Roots: roots}, Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	var p core.Plugin
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) { // until the gateway heard box2
		if p, err = gw.Plugin("box2", "claude", core.Message{}, true); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the gateway never heard box2")
		}
	}
	held := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, core.Turn{Workdir: dir, Prompt: "first", SessionID: "held"}, func(core.Event) {})
		held <- err
	}()
	<-plugin.checking
	if _, err := p.Run(ctx, core.Turn{Workdir: dir, Prompt: "second"}, func(core.Event) {}); err != nil {
		t.Errorf("a turn asked while another's start was held: %v", err)
	}
	close(plugin.release)
	if err := <-held; err != nil {
		t.Errorf("the held turn: %v", err)
	}
}

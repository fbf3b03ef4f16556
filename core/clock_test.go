package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
)

// Sleep waits on the clock it is given, and gives up when its context
// ends first.
func TestSleep(t *testing.T) {
	t.Parallel()
	clock := coretest.NewManualClock()
	done := make(chan bool)
	go func() { done <- core.Sleep(context.Background(), clock, time.Minute) }()
	if d := <-clock.Waiting(); d != time.Minute {
		t.Fatalf("Sleep waits %v, want 1m", d)
	}
	clock.Advance(time.Minute)
	if !<-done {
		t.Error("Sleep = false once its minute passed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- core.Sleep(ctx, clock, time.Minute) }()
	<-clock.Waiting()
	cancel()
	if <-done {
		t.Error("Sleep = true though its context ended first")
	}
}

// ScopeOf places a command typed outside a conversation's thread.
func TestScopeOf(t *testing.T) {
	t.Parallel()
	cmds := core.NewCommands([]core.Plugin{plugintest.Named{PluginID: "claude"}})
	for _, tt := range []struct {
		text string
		want core.Scope
	}{
		{"/claude start ~/x", core.ScopeNewConversation},
		{"/stop", core.ScopeConversation},
		{"/status", core.ScopeConversation},
		{"/help", core.ScopeHere},
		{"/no-such-command", core.ScopeHere},
	} {
		if got := cmds.ScopeOf(tt.text); got != tt.want {
			t.Errorf("ScopeOf(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// instantPlugin answers at once with one text event: what remains of a
// turn is the hop.
type instantPlugin struct{}

func (instantPlugin) ID() string   { return "claude" }
func (instantPlugin) Name() string { return "Claude Code" }
func (instantPlugin) Conversations(context.Context, string) ([]core.ConversationInfo, error) {
	return nil, nil
}
func (instantPlugin) Run(_ context.Context, t core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	emit(core.TextEvent("ok"))
	return core.TurnResult{ResumeToken: "s"}, nil
}

// BenchmarkTurnHop is a whole turn of an instant plugin through the NATS
// hop (turn request, its reply, one event, the end) on loopback; the
// direct call is the local path.
func BenchmarkTurnHop(b *testing.B) {
	for _, remoteHop := range []bool{false, true} {
		name := map[bool]string{false: "local", true: "nats"}[remoteHop]
		b.Run(name, func(b *testing.B) {
			var p core.Plugin = instantPlugin{}
			dir := b.TempDir()
			if remoteHop {
				url := runNATS(b, nil)
				nc := connect(b, url)
				heard := make(chan *nats.Msg, 1)
				sub, err := nc.ChanSubscribe("jakebot.v1.announce.box2", heard)
				if err != nil {
					b.Fatal(err)
				}
				gw, err := remote.NewGateway(context.Background(), nc, remote.GatewayConfig{OfflineAfter: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				defer gw.Close()
				reg, _ := core.NewRegistry(instantPlugin{})
				roots, _ := core.NewRoots([]string{dir})
				r, err := remote.NewRunner(connect(b, url, remote.RunnerInbox("box2")), remote.RunnerConfig{Name: "box2", Plugins: reg, Roots: roots, Interval: time.Second})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go r.Run(ctx)
				// Until the gateway's own handler has had an announcement.
				for <-heard; ; <-heard {
					if p, err = gw.Plugin("box2", "claude", core.Message{}, true); err == nil {
						break
					}
				}
				sub.Unsubscribe()
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.Run(context.Background(), core.Turn{Workdir: dir, Prompt: "hi"}, func(core.Event) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package remote_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/workspace"
	"github.com/jake-bot/jake-bot/platforms/platformtest"
	"github.com/jake-bot/jake-bot/plugins/plugintest"
	"github.com/jake-bot/jake-bot/plugins/remote"
)

// instant answers at once with one text event: what remains of a turn
// is the hop.
func instant(_ context.Context, _ core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	emit(core.TextEvent("ok"))
	return core.TurnResult{SessionID: "s"}, nil
}

// BenchmarkTurnHop is a whole turn of an instant plugin through the NATS
// hop (turn request, its reply, one event, the end) on loopback; the
// direct call is the local path.
func BenchmarkTurnHop(b *testing.B) {
	for _, remoteHop := range []bool{false, true} {
		name := map[bool]string{false: "local", true: "nats"}[remoteHop]
		b.Run(name, func(b *testing.B) {
			var p core.Plugin = &plugintest.Scripted{Script: instant, Unrecorded: true}
			dir := b.TempDir()
			if remoteHop {
				var err error
				if p, err = hop(b, nil, p, dir).Plugin("box2", "claude", core.Message{}, true); err != nil {
					b.Fatal(err)
				}
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

// turnProbe times a turn from inside: when it begins (the model request
// would go out), and when it emits its second event, once the first is in
// the chat (so that the second is an edit).
type turnProbe struct {
	ran, emitted chan time.Time
	next         chan struct{}
}

func (p *turnProbe) turn(_ context.Context, _ core.Turn, emit func(core.Event)) (core.TurnResult, error) {
	p.ran <- time.Now()
	emit(core.TextEvent("first "))
	<-p.next
	p.emitted <- time.Now()
	emit(core.TextEvent("second"))
	return core.TurnResult{SessionID: "s", CostUSD: 0.01}, nil
}

// BenchmarkHop measures what the NATS hop adds to a turn, against the
// local path, through the router to a recording platform: from the
// message to the plugin's Run (where a CLI's model request would go out),
// and from an event to the platform's edit showing it. It reports the
// medians.
func BenchmarkHop(b *testing.B) {
	for _, remoteHop := range []bool{false, true} {
		b.Run(map[bool]string{false: "local", true: "nats"}[remoteHop], func(b *testing.B) {
			probe := &turnProbe{ran: make(chan time.Time, 1), emitted: make(chan time.Time, 1), next: make(chan struct{})}
			plugin := &plugintest.Scripted{Script: probe.turn, Unrecorded: true}
			dir := b.TempDir()
			local, _ := core.NewRegistry(plugin)
			where := dir
			var runners core.Runners
			if remoteHop {
				runners = hop(b, nil, plugin, dir)
				where = "box2:" + dir
			}
			access := core.NewAccess()
			access.Admin("fake", "u")
			roots, _ := core.NewRoots([]string{dir})
			router := core.NewRouter(context.Background(), core.RouterConfig{Plugins: local, Access: access, Roots: roots, Runners: runners}, nil)
			defer router.Shutdown()
			rec := platformtest.NewRecorder(core.SystemClock{}, core.Limits{})
			handle := router.Attach(rec)
			say := func(text string) {
				handle(context.Background(), core.Message{Key: core.ConversationKey{Platform: "fake", User: "u", Channel: "c"}, Text: text})
			}
			// until waits for a write containing text; a failed turn
			// fails the benchmark rather than leaving it waiting.
			until := func(text string) platformtest.Call {
				for c := range rec.Written() {
					if strings.Contains(c.Text, text) {
						return c
					}
					if strings.Contains(c.Text, "Error:") {
						b.Fatalf("waiting for %q: %s", text, c.Text)
					}
				}
				panic("unreachable")
			}
			say("/claude start " + where)
			until("started")
			var toRun, toEdit []time.Duration
			for b.Loop() {
				sent := time.Now()
				say("go")
				toRun = append(toRun, (<-probe.ran).Sub(sent))
				until("first")
				probe.next <- struct{}{}
				emitted := <-probe.emitted
				edit := until("second")
				toEdit = append(toEdit, edit.At.Sub(emitted))
				if !strings.Contains(edit.Text, "$0.0100") {
					until("$0.0100") // the reply's end
				}
				router.Wait()
			}
			b.ReportMetric(float64(median(toRun).Microseconds()), "msg-to-run-µs")
			b.ReportMetric(float64(median(toEdit).Microseconds()), "event-to-edit-µs")
		})
	}
}

// hop is a gateway reaching plugin on runner box2 over a real NATS
// server run with opts, once it has heard box2.
func hop(b testing.TB, opts *server.Options, plugin core.Plugin, dir string) *remote.Gateway {
	url := runNATS(b, opts)
	nc := connect(b, url)
	heard := make(chan *nats.Msg, 1)
	sub, err := nc.ChanSubscribe("jakebot.v4.announce.box2", heard)
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Unsubscribe()
	gw, err := remote.NewGateway(context.Background(), nc, remote.GatewayConfig{OfflineAfter: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(gw.Close)
	reg, _ := core.NewRegistry(plugin)
	roots, _ := core.NewRoots([]string{dir})
	r, err := remote.NewRunner(connect(b, url, remote.RunnerInbox("box2")), remote.RunnerConfig{Name: "box2", Plugins: reg, Workspace: workspace.Machine{Roots: roots}, Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go r.Run(ctx)
	// Until the gateway's own handler has had an announcement.
	for <-heard; ; <-heard {
		if _, err = gw.Plugin("box2", "claude", core.Message{}, true); err == nil {
			return gw
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
